package dev.locksmith.it.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The documentation check catches what it is for: a block that calls a method the API does not
 * have (renamed or removed) fails, naming the page and line; so does a link to a page or a heading
 * that does not exist. And what it accepts: both kinds of block, with the lines of a failure
 * counted on the page.
 */
class DocsCheckTest {

    @TempDir
    Path root;

    @Test
    void aBlockCallingARenamedMethodFailsAtItsPageAndLine() throws IOException {
        List<MarkdownPage> pages = List.of(write("docs/guide.md", """
                # Guide

                ```java
                JobQueue queue = new JobQueue(locksmith);
                queue.enqueueJob(dsl, NewJob.of("emails", "welcome"));
                ```
                """));

        List<String> problems = DocsCheck.snippetProblems(pages);

        assertThat(problems).hasSize(1);
        assertThat(problems.get(0)).startsWith("docs/guide.md:5: ").contains("cannot find symbol", "enqueueJob");
    }

    @Test
    void aBlockWrittenForAnApiThatIsGoneFails() throws IOException {
        List<MarkdownPage> pages = List.of(write("README.md", """
                Before the environment, a schema was a decorated context:

                ```java
                DSLContext billing = TableSchema.using(dsl, "billing");
                JobWorker.builder(dataSource, "emails", handler).schema("billing").build();
                ```
                """));

        List<String> problems = DocsCheck.snippetProblems(pages);

        assertThat(problems)
                .anySatisfy(p -> assertThat(p).startsWith("README.md:4: ").contains("TableSchema"));
        assertThat(problems)
                .anySatisfy(p -> assertThat(p).startsWith("README.md:5: ").contains("schema(java.lang.String)"));
    }

    @Test
    void statementsAndWholeFilesCompileAndAFileKeepsItsLineNumbers() throws IOException {
        List<MarkdownPage> pages = List.of(write("docs/ok.md", """
                ```java
                Locksmith locksmith = Locksmith.builder(dataSource).schema("billing").build();
                JobQueue queue = new JobQueue(locksmith);           // shadows the harness's queue
                record Welcome(String to) {}
                dsl.transaction(c -> queue.enqueue(c.dsl(), NewJob.of("emails", "welcome")));
                ```

                ```java
                package com.example;

                import java.util.function.Supplier;

                public class App {
                    public static void main(String[] args) {
                        Supplier<Duration> lease = () -> Duration.ofSeconds(30);
                    }
                }
                ```

                ```java
                @SuppressWarnings("unused")
                class Emails implements JobHandler {
                    @Override
                    public void handle(Job job, DSLContext tx) {
                        tx.fetchOne("select 1").noSuchMethod();
                    }
                }
                ```
                """));

        List<String> problems = DocsCheck.snippetProblems(pages);

        assertThat(problems).hasSize(1);
        assertThat(problems.get(0)).startsWith("docs/ok.md:25: ").contains("noSuchMethod");
    }

    @Test
    void aLinkToAMissingPageOrHeadingFails() throws IOException {
        write("docs/queue.md", """
                # The queue

                ## `JobWorker`: leased, at least once

                <a id="job-states"></a>
                """);
        MarkdownPage readme = write("README.md", """
                # locksmith

                See [the queue](docs/queue.md), [leased workers](docs/queue.md#jobworker-leased-at-least-once),
                [the states](docs/queue.md#job-states) and [this](#locksmith); `[not a link](nowhere.md)`.
                Broken: [workers](docs/workers.md), [a heading](docs/queue.md#jobworker),
                [here](#nothing) and [up](../outside.md).

                ```java
                // [not a link either](nowhere.md)
                ```
                """);

        List<String> problems = DocsCheck.linkProblems(root, List.of(readme));

        assertThat(problems)
                .containsExactly(
                        "README.md:5: link 'docs/workers.md': no such file docs/workers.md",
                        "README.md:5: link 'docs/queue.md#jobworker': no heading with anchor #jobworker in docs/queue.md",
                        "README.md:6: link '#nothing': no heading with anchor #nothing in README.md",
                        "README.md:6: link '../outside.md': leaves the repository");
    }

    @Test
    void anchorsAreGitHubs() {
        assertThat(MarkdownPage.slug("`JobWorker`: leased, at least once")).isEqualTo("jobworker-leased-at-least-once");
        assertThat(MarkdownPage.slug("Errors and retry (`PgErrors`)")).isEqualTo("errors-and-retry-pgerrors");
        assertThat(MarkdownPage.slug("PgBouncer in [transaction](x.md) mode"))
                .isEqualTo("pgbouncer-in-transaction-mode");
        assertThat(MarkdownPage.slug("max_prepared_transactions & 2PC")).isEqualTo("max_prepared_transactions--2pc");
    }

    private MarkdownPage write(String name, String text) throws IOException {
        Path file = root.resolve(name);
        Files.createDirectories(file.getParent());
        Files.writeString(file, text);
        return MarkdownPage.read(root, file);
    }
}
