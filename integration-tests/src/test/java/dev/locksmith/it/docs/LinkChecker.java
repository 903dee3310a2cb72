package dev.locksmith.it.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Checks the links of Markdown pages: a relative link must name a file or directory of the
 * repository, and a {@code #anchor} (on the same page or another page) a heading or HTML anchor
 * of that page, as GitHub renders it. Links to other sites ({@code https:}, {@code mailto:}) are
 * not followed: the build runs offline.
 */
final class LinkChecker {

    private final Path root;
    private final Map<Path, MarkdownPage> pages = new HashMap<>();

    /**
     * A checker for pages under {@code root}.
     *
     * @param root the repository root: links may not leave it
     * @param known pages already read (others are read when a link needs their anchors)
     */
    LinkChecker(Path root, List<MarkdownPage> known) {
        this.root = root.toAbsolutePath().normalize();
        for (MarkdownPage page : known) {
            pages.put(page.file().toAbsolutePath().normalize(), page);
        }
    }

    /**
     * Checks every link of {@code page}.
     *
     * @return one line per broken link, {@code page:line: what is wrong}; empty when all resolve
     */
    List<String> check(MarkdownPage page) {
        List<String> problems = new ArrayList<>();
        for (MarkdownPage.Link link : page.links()) {
            String problem = problem(page, link.target());
            if (problem != null) {
                problems.add(page.name() + ":" + link.line() + ": link '" + link.target() + "': " + problem);
            }
        }
        return problems;
    }

    private String problem(MarkdownPage page, String target) {
        if (target.isEmpty()) {
            return "empty";
        }
        String lower = target.toLowerCase(Locale.ROOT);
        if (lower.startsWith("http://") || lower.startsWith("https://") || lower.startsWith("mailto:")) {
            return null;
        }
        int hash = target.indexOf('#');
        String path = URLDecoder.decode(hash < 0 ? target : target.substring(0, hash), StandardCharsets.UTF_8);
        String anchor = hash < 0 ? null : target.substring(hash + 1);
        Path file;
        if (path.isEmpty()) {
            file = page.file().toAbsolutePath().normalize();
        } else if (path.startsWith("/")) {
            file = root.resolve(path.substring(1)).normalize();
        } else {
            file = page.file()
                    .toAbsolutePath()
                    .normalize()
                    .getParent()
                    .resolve(path)
                    .normalize();
        }
        if (!file.startsWith(root)) {
            return "leaves the repository";
        }
        if (!Files.exists(file)) {
            return "no such file " + root.relativize(file);
        }
        if (anchor == null) {
            return null;
        }
        if (anchor.isEmpty()) {
            return "empty anchor";
        }
        if (!file.getFileName().toString().endsWith(".md")) {
            return null; // an anchor into source code (#L42) is GitHub's, not the page's
        }
        MarkdownPage target0 = page(file);
        if (!target0.anchors().contains(anchor)) {
            return "no heading with anchor #" + anchor + " in " + target0.name();
        }
        return null;
    }

    private MarkdownPage page(Path file) {
        return pages.computeIfAbsent(file, f -> {
            try {
                return MarkdownPage.read(root, f);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }
}
