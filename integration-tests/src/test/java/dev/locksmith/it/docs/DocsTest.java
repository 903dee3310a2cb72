package dev.locksmith.it.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The documentation as a user reads it (README.md, docs/, CONTRIBUTING.md and every other page of
 * the repository): every Java block compiles against this build's artifacts, and every link
 * between pages, and to a heading's anchor, resolves. CONTRIBUTING.md, "Snippets that compile",
 * says how a block is compiled and what it may use.
 */
class DocsTest {

    /** The repository root: Maven runs this module's tests in {@code integration-tests/}. */
    private static final Path ROOT = Path.of("..");

    private static List<MarkdownPage> pages;

    @BeforeAll
    static void readPages() {
        pages = DocsCheck.pages(ROOT);
    }

    @Test
    void everyJavaBlockCompilesAgainstTheCurrentApi() {
        assertThat(pages).extracting(MarkdownPage::name).contains("README.md", "CONTRIBUTING.md", "docs/README.md");
        List<String> problems = DocsCheck.snippetProblems(pages);
        assertThat(problems)
                .as(
                        "Java blocks of the documentation that do not compile (see CONTRIBUTING.md, \"Snippets that compile\")")
                .isEmpty();
        assertThat(pages.stream()
                        .flatMap(p -> p.blocks().stream())
                        .filter(b -> b.language().equals("java")))
                .as("java blocks found")
                .hasSizeGreaterThan(20);
    }

    @Test
    void everyLinkResolves() {
        assertThat(DocsCheck.linkProblems(ROOT, pages))
                .as("links between pages, or to anchors, that lead nowhere")
                .isEmpty();
    }

    @Test
    void everyPageOfDocsIsInItsIndexAndTheReadmeLeadsThere() throws IOException {
        MarkdownPage index = page("docs/README.md");
        Set<String> linked = index.links().stream()
                .map(l -> l.target().replaceAll("#.*", ""))
                .filter(t -> !t.isEmpty())
                .collect(Collectors.toCollection(TreeSet::new));
        Set<String> docs = new TreeSet<>();
        try (var files = Files.list(ROOT.resolve("docs"))) {
            files.map(f -> f.getFileName().toString())
                    .filter(n -> n.endsWith(".md") && !n.equals("README.md"))
                    .forEach(docs::add);
        }
        assertThat(linked).as("pages of docs/ that docs/README.md links to").containsAll(docs);
        assertThat(page("README.md").links())
                .extracting(MarkdownPage.Link::target)
                .contains("docs/README.md");
    }

    @Test
    void theReadmeStaysAFrontDoor() {
        MarkdownPage readme = page("README.md");
        long lines = readme.lineCount();
        assertThat(lines).as("README.md lines: the details belong in docs/").isLessThanOrEqualTo(260);
    }

    private static MarkdownPage page(String name) {
        return pages.stream()
                .filter(p -> p.name().equals(name))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no page " + name));
    }
}
