package dev.locksmith.it.docs;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One Markdown page as the docs check reads it: its fenced code blocks (with the line each starts
 * on), its links, and the anchors GitHub gives its headings. Only what the pages of this
 * repository use is understood: ATX headings ({@code ## Title}), fenced blocks of three or more
 * backticks, inline links and images ({@code [text](target)}), reference definitions
 * ({@code [id]: target}) and HTML anchors ({@code <a id="...">}).
 */
final class MarkdownPage {

    /** A fenced code block: its info string's first word, its text, and the page line of its first text line. */
    record CodeBlock(String language, String code, int firstLine) {}

    /** A link of the page, with the line it is on. */
    record Link(String target, int line) {}

    private static final Pattern FENCE = Pattern.compile("^\\s{0,3}(`{3,})\\s*([^`\\s]*)?.*$");
    private static final Pattern HEADING = Pattern.compile("^\\s{0,3}(#{1,6})\\s+(.*?)\\s*#*\\s*$");
    private static final Pattern INLINE_LINK =
            Pattern.compile("!?\\[(?:[^\\[\\]]|\\[[^\\]]*\\])*\\]\\(\\s*<?([^)\\s>]*)>?(?:\\s+\"[^\"]*\")?\\s*\\)");
    private static final Pattern REFERENCE =
            Pattern.compile("^\\s{0,3}\\[[^\\]]+\\]:\\s+<?(\\S+?)>?(?:\\s+\"[^\"]*\")?\\s*$");
    private static final Pattern HTML_ANCHOR = Pattern.compile("<a\\s+(?:id|name)=\"([^\"]+)\"");
    private static final Pattern CODE_SPAN = Pattern.compile("(`+)(?:(?!\\1).)+?\\1");

    private final String name;
    private final Path file;
    private final List<CodeBlock> blocks = new ArrayList<>();
    private final List<Link> links = new ArrayList<>();
    private final Set<String> anchors = new LinkedHashSet<>();
    private final int lineCount;

    private MarkdownPage(String name, Path file, List<String> lines) {
        this.name = name;
        this.file = file;
        this.lineCount = lines.size();
        parse(lines);
    }

    /**
     * Reads {@code file}, naming it in reports as its path relative to {@code root}.
     *
     * @param root the repository root
     * @param file a page under it
     */
    static MarkdownPage read(Path root, Path file) throws IOException {
        String name = root.toAbsolutePath()
                .normalize()
                .relativize(file.toAbsolutePath().normalize())
                .toString();
        return new MarkdownPage(name.replace('\\', '/'), file, Files.readAllLines(file, StandardCharsets.UTF_8));
    }

    /** {@return the page's path relative to the repository root, as reports name it} */
    String name() {
        return name;
    }

    /** {@return the page's file} */
    Path file() {
        return file;
    }

    /** {@return how many lines the page has} */
    int lineCount() {
        return lineCount;
    }

    /** {@return the fenced code blocks, in page order} */
    List<CodeBlock> blocks() {
        return blocks;
    }

    /** {@return the links outside code, in page order} */
    List<Link> links() {
        return links;
    }

    /** {@return the anchors a link may name after {@code #}: the headings' and the HTML anchors} */
    Set<String> anchors() {
        return anchors;
    }

    private void parse(List<String> lines) {
        Map<String, Integer> slugCounts = new HashMap<>();
        String openFence = null;
        String language = "";
        StringBuilder code = new StringBuilder();
        int codeStart = 0;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            int lineNumber = i + 1;
            Matcher fence = FENCE.matcher(line);
            if (openFence != null) {
                if (fence.matches()
                        && fence.group(1).length() >= openFence.length()
                        && line.trim().equals(fence.group(1))) {
                    blocks.add(new CodeBlock(language, code.toString(), codeStart));
                    openFence = null;
                } else {
                    code.append(line).append('\n');
                }
                continue;
            }
            if (fence.matches()) {
                openFence = fence.group(1);
                language = fence.group(2) == null ? "" : fence.group(2).toLowerCase(Locale.ROOT);
                code.setLength(0);
                codeStart = lineNumber + 1;
                continue;
            }
            Matcher heading = HEADING.matcher(line);
            if (heading.matches()) {
                String slug = slug(heading.group(2));
                int seen = slugCounts.merge(slug, 1, Integer::sum) - 1;
                anchors.add(seen == 0 ? slug : slug + "-" + seen);
            }
            Matcher html = HTML_ANCHOR.matcher(line);
            while (html.find()) {
                anchors.add(html.group(1));
            }
            String text = CODE_SPAN.matcher(line).replaceAll("");
            Matcher reference = REFERENCE.matcher(text);
            if (reference.matches()) {
                links.add(new Link(reference.group(1), lineNumber));
                continue;
            }
            Matcher link = INLINE_LINK.matcher(text);
            while (link.find()) {
                links.add(new Link(link.group(1), lineNumber));
            }
        }
        if (openFence != null) {
            throw new IllegalArgumentException(name + ":" + (codeStart - 1) + ": code block never closed");
        }
    }

    /**
     * The anchor GitHub gives a heading: its text as rendered (code spans, links and emphasis
     * reduced to their text), in lower case, with everything but letters, digits, spaces, hyphens
     * and underscores removed, and spaces made hyphens.
     *
     * @param heading the heading's Markdown text
     * @return the anchor, without {@code #}
     */
    static String slug(String heading) {
        String text = heading.replaceAll("!?\\[([^\\]]*)\\]\\([^)]*\\)", "$1")
                .replace("`", "")
                .replace("*", "")
                .replaceAll("<[^>]+>", "");
        StringBuilder slug = new StringBuilder();
        text.toLowerCase(Locale.ROOT).codePoints().forEach(c -> {
            if (c == ' ') {
                slug.append('-');
            } else if (Character.isLetterOrDigit(c) || c == '-' || c == '_') {
                slug.appendCodePoint(c);
            }
        });
        return slug.toString();
    }
}
