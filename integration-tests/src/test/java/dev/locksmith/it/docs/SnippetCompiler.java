package dev.locksmith.it.docs;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

/**
 * Compiles the Java code blocks of the documentation against the artifacts of this build (the
 * test class path of this module), all in one javac run, and reports each error at the page and
 * line of the block it came from.
 *
 * <p>A block is compiled one of two ways (CONTRIBUTING.md, "Snippets that compile"):
 *
 * <ul>
 *   <li><b>A compilation unit</b> when every line that starts at column 0 (other than comments,
 *       annotations and closing brackets) is a {@code package} or {@code import} declaration or
 *       begins a type declaration ({@code class}, {@code record}, {@code interface}, {@code enum}):
 *       it is compiled as a file of its own, in a package of its own (a {@code package} line of the
 *       block is replaced).</li>
 *   <li><b>Statements</b> otherwise: the body of a method {@code void run() throws Exception} of a
 *       class extending {@link SnippetScope}, whose fields ({@code dataSource}, {@code dsl},
 *       {@code locksmith}, {@code queue}, ...) are in scope and may be shadowed by the block's own
 *       declarations. Local records, classes, interfaces and enums are statements too.</li>
 * </ul>
 *
 * <p>Both get {@link #IMPORTS} on their first line, so the block's lines keep their numbers; a
 * block may add imports of its own (a compilation unit only).
 */
final class SnippetCompiler {

    /** A code block to compile, and where it is. */
    record Snippet(String page, int firstLine, String code) {}

    /**
     * What every block sees without importing it: locksmith's exported packages, the JDK
     * packages the pages use, jOOQ, and a few single types (single-type imports win over the
     * on-demand ones, which settles names two packages share).
     */
    static final List<String> IMPORTS = List.of(
            "dev.locksmith.*",
            "dev.locksmith.accounts.*",
            "dev.locksmith.advisory.*",
            "dev.locksmith.audit.*",
            "dev.locksmith.exception.*",
            "dev.locksmith.jobs.*",
            "dev.locksmith.observe.*",
            "dev.locksmith.pool.*",
            "dev.locksmith.schedules.*",
            "dev.locksmith.schema.*",
            "dev.locksmith.micrometer.*",
            "dev.locksmith.opentelemetry.*",
            "dev.locksmith.dashboard.*",
            "dev.locksmith.codegen.Tables",
            "dev.locksmith.codegen.tables.records.*",
            "static dev.locksmith.codegen.Tables.*",
            "java.io.IOException",
            "java.math.BigDecimal",
            "java.time.*",
            "java.util.*",
            "java.util.concurrent.TimeUnit",
            "javax.sql.DataSource",
            "org.jooq.*",
            "org.jooq.impl.DSL",
            "org.slf4j.event.Level",
            "io.micrometer.core.instrument.MeterRegistry",
            "io.opentelemetry.api.OpenTelemetry",
            "dev.locksmith.Locksmith",
            "dev.locksmith.schedules.Trigger",
            "dev.locksmith.jobs.Job",
            "org.jooq.Record");

    private static final Pattern TYPE_DECLARATION = Pattern.compile(
            "^(?:@[\\w.]+(?:\\(.*\\))?\\s+)*(?:(?:public|protected|private|abstract|final|static|sealed|non-sealed|strictfp)\\s+)*"
                    + "(?:class|record|interface|enum|@interface)\\s+(\\w+).*");
    private static final Pattern ANNOTATION = Pattern.compile("^@[\\w.]+(?:\\(.*\\))?$");
    private static final Pattern PUBLIC_TYPE = Pattern.compile(
            "^(?:@[\\w.]+(?:\\(.*\\))?\\s+)*public\\s+(?:(?:abstract|final|sealed|non-sealed|strictfp)\\s+)*"
                    + "(?:class|record|interface|enum|@interface)\\s+(\\w+).*");

    private SnippetCompiler() {}

    /**
     * Compiles {@code snippets}.
     *
     * @return one line per error, {@code page:line: message}; empty when everything compiled
     */
    static List<String> compile(List<Snippet> snippets) {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        List<Source> sources = new ArrayList<>();
        for (int i = 0; i < snippets.size(); i++) {
            sources.add(Source.of(snippets.get(i), "snippets.s" + i));
        }
        if (sources.isEmpty()) {
            return List.of();
        }
        Path out = null;
        try (StandardJavaFileManager files = javac.getStandardFileManager(diagnostics, Locale.ROOT, null)) {
            out = Files.createTempDirectory("locksmith-snippets");
            List<String> options = List.of(
                    "-proc:none",
                    "-nowarn",
                    "-Xlint:none",
                    "-encoding",
                    "UTF-8",
                    "-d",
                    out.toString(),
                    "--class-path",
                    System.getProperty("java.class.path"));
            StringWriter javacOutput = new StringWriter();
            javac.getTask(javacOutput, files, diagnostics, options, null, sources)
                    .call();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            delete(out);
        }
        List<String> problems = new ArrayList<>();
        for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
            if (d.getKind() != Diagnostic.Kind.ERROR) {
                continue;
            }
            String message = d.getMessage(Locale.ROOT).replace("\n", "; ").replaceAll("\\s+", " ");
            if (d.getSource() instanceof Source source) {
                problems.add(source.snippet.page() + ":" + source.pageLine(d.getLineNumber()) + ": " + message);
            } else {
                problems.add(message);
            }
        }
        return problems;
    }

    /** Whether {@code code} is a compilation unit (else statements): see the class description. */
    static boolean isCompilationUnit(String code) {
        boolean typeSeen = false;
        for (String line : code.split("\n", -1)) {
            if (line.isEmpty() || Character.isWhitespace(line.charAt(0))) {
                continue;
            }
            String t = line.trim();
            if (t.startsWith("//")
                    || t.startsWith("/*")
                    || t.startsWith("*")
                    || t.startsWith("}")
                    || t.startsWith(")")) {
                continue;
            }
            if (t.startsWith("package ") || t.startsWith("import ")) {
                continue;
            }
            if (TYPE_DECLARATION.matcher(t).matches()) {
                typeSeen = true;
                continue;
            }
            if (ANNOTATION.matcher(t).matches()) {
                continue; // an annotation on a line of its own, before what it annotates
            }
            return false;
        }
        return typeSeen;
    }

    private static void delete(Path dir) {
        if (dir == null) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            // a temporary directory left behind is harmless
        }
    }

    /** A block wrapped into a file of its own. */
    private static final class Source extends SimpleJavaFileObject {
        private final Snippet snippet;
        private final String text;
        /** Generated lines before the block's first line. */
        private final int offset;

        private final int codeLines;

        private Source(Snippet snippet, URI uri, String text, int offset, int codeLines) {
            super(uri, Kind.SOURCE);
            this.snippet = snippet;
            this.text = text;
            this.offset = offset;
            this.codeLines = codeLines;
        }

        static Source of(Snippet snippet, String pkg) {
            String header = "package " + pkg + ";"
                    + IMPORTS.stream().map(i -> " import " + i + ";").reduce("", String::concat);
            List<String> lines = new ArrayList<>(List.of(snippet.code().split("\n", -1)));
            if (!lines.isEmpty() && lines.get(lines.size() - 1).isEmpty()) {
                lines.remove(lines.size() - 1);
            }
            String code = String.join("\n", lines);
            if (isCompilationUnit(code)) {
                String name = "Snippet";
                int packageLine = -1;
                for (int i = 0; i < lines.size(); i++) {
                    Matcher pub = PUBLIC_TYPE.matcher(lines.get(i));
                    if (pub.matches() && name.equals("Snippet")) {
                        name = pub.group(1);
                    }
                    if (packageLine < 0 && lines.get(i).startsWith("package ")) {
                        packageLine = i;
                    }
                }
                URI uri = URI.create("string:///" + pkg.replace('.', '/') + "/" + name + ".java");
                if (packageLine >= 0) {
                    lines.set(packageLine, header);
                    return new Source(snippet, uri, String.join("\n", lines) + "\n", 0, lines.size());
                }
                return new Source(snippet, uri, header + "\n" + code + "\n", 1, lines.size());
            }
            URI uri = URI.create("string:///" + pkg.replace('.', '/') + "/Snippet.java");
            String text = header + " class Snippet extends " + SnippetScope.class.getName()
                    + " { void run() throws Exception {\n" + code + "\n}}\n";
            return new Source(snippet, uri, text, 1, lines.size());
        }

        /** The page line of generated line {@code line} (1-based), within the block. */
        long pageLine(long line) {
            long inBlock = Math.max(1, Math.min(codeLines, line - offset));
            return snippet.firstLine() + inBlock - 1;
        }

        @Override
        public CharSequence getCharContent(boolean ignoreEncodingErrors) {
            return text;
        }
    }
}
