package dev.locksmith.dashboard;

import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/** The frame around every page: head, navigation, the live part's container, footer. */
final class Layout {

    /** The pages in the navigation. */
    enum Nav {
        QUEUES("Queues", "/"),
        JOBS("Jobs", "/jobs"),
        SCHEDULES("Schedules", "/schedules"),
        POOL("Pool", "/pool"),
        LOCKS("Locks", "/locks"),
        NONE("", "");

        final String label;
        final String path;

        Nav(String label, String path) {
            this.label = label;
            this.path = path;
        }
    }

    /**
     * A page's content: its title, what stays (headings, filters), and what the script refreshes.
     *
     * @param live null for a page that does not refresh
     */
    record Page(String title, Nav nav, Html fixed, @Nullable Html live) {}

    private Layout() {}

    static Html render(DashboardConfig config, Request request, Page page, @Nullable Html flash) {
        String base = request.base();
        List<Html> links = new ArrayList<>();
        for (Nav nav : Nav.values()) {
            if (nav != Nav.NONE) {
                links.add(Html.of(
                        "<a href=\"{}{}\"{}>{}</a>",
                        base,
                        nav.path,
                        nav == page.nav() ? Html.raw(" class=\"active\" aria-current=\"page\"") : Html.EMPTY,
                        nav.label));
            }
        }
        long refresh = page.live() == null ? 0 : config.refreshInterval().toMillis();
        return Html.of(
                """
                <!DOCTYPE html>
                <html lang="en"><head><meta charset="utf-8">
                <meta name="viewport" content="width=device-width, initial-scale=1">
                <title>{} · {}</title>
                <link rel="stylesheet" href="{}/assets/dashboard.css">
                <script src="{}/assets/dashboard.js" defer></script>
                </head>
                <body data-refresh="{}">
                <header><a class="brand" href="{}/">{}</a><nav>{}</nav>
                <span class="mode {}">{}</span><span class="schema">schema <code>{}</code>{}</span></header>
                <main>{}{}<div id="live">{}</div></main>
                <footer><span id="status">{}</span> <button type="button" id="pause" {}>pause</button></footer>
                </body></html>
                """,
                page.title(),
                config.title(),
                base,
                base,
                refresh,
                base,
                config.title(),
                Html.join(links),
                config.readOnly() ? "read-only" : "actions",
                config.readOnly() ? "read-only" : "actions enabled",
                config.schema(),
                request.user() == null ? Html.EMPTY : Html.of(" · {}", request.user()),
                flash == null ? Html.EMPTY : flash,
                page.fixed(),
                page.live() == null ? Html.EMPTY : page.live(),
                refresh == 0 ? "" : "live: refreshes every " + Format.age(config.refreshInterval()),
                refresh == 0 ? Html.raw("hidden") : Html.EMPTY);
    }
}
