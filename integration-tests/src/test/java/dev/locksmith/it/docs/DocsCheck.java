package dev.locksmith.it.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;

/**
 * The documentation check: which pages there are, and what is wrong with their Java blocks and
 * their links. {@link DocsTest} runs it on the repository's pages; {@link DocsCheckTest} shows
 * that it catches what it is for.
 */
final class DocsCheck {

    private DocsCheck() {}

    /**
     * Every Markdown page under {@code root}, outside build output ({@code target}) and hidden
     * directories ({@code .git}, {@code .mvn}, ...), in path order.
     *
     * @param root the repository root
     * @return the pages, read
     */
    static List<MarkdownPage> pages(Path root) {
        List<Path> files = new ArrayList<>();
        try {
            Files.walkFileTree(root, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attributes) {
                    String name =
                            dir.getFileName() == null ? "" : dir.getFileName().toString();
                    boolean skipped = !dir.equals(root)
                            && (name.equals("target") || name.equals("node_modules") || name.startsWith("."));
                    return skipped ? FileVisitResult.SKIP_SUBTREE : FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) {
                    if (file.getFileName().toString().endsWith(".md")) {
                        files.add(file);
                    }
                    return FileVisitResult.CONTINUE;
                }
            });
            List<MarkdownPage> pages = new ArrayList<>();
            for (Path file : files.stream().sorted().toList()) {
                pages.add(MarkdownPage.read(root, file));
            }
            return pages;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Compiles every {@code java} block of {@code pages} (SnippetCompiler).
     *
     * @return one line per compile error, {@code page:line: message}
     */
    static List<String> snippetProblems(List<MarkdownPage> pages) {
        List<SnippetCompiler.Snippet> snippets = new ArrayList<>();
        for (MarkdownPage page : pages) {
            for (MarkdownPage.CodeBlock block : page.blocks()) {
                if (block.language().equals("java")) {
                    snippets.add(new SnippetCompiler.Snippet(page.name(), block.firstLine(), block.code()));
                }
            }
        }
        return SnippetCompiler.compile(snippets);
    }

    /**
     * Checks every link of {@code pages} (LinkChecker).
     *
     * @return one line per broken link, {@code page:line: what is wrong}
     */
    static List<String> linkProblems(Path root, List<MarkdownPage> pages) {
        LinkChecker checker = new LinkChecker(root, pages);
        List<String> problems = new ArrayList<>();
        for (MarkdownPage page : pages) {
            problems.addAll(checker.check(page));
        }
        return problems;
    }
}
