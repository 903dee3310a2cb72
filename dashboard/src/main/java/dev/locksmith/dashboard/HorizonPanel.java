package dev.locksmith.dashboard;

import dev.locksmith.audit.HorizonHolder;
import dev.locksmith.audit.HorizonReport;
import java.util.ArrayList;
import java.util.List;

/**
 * The locks page's list of what holds the MVCC horizon back ({@link HorizonReport}): sessions,
 * replication slots, prepared transactions and standbys, oldest first, with how long and how many
 * transactions each has held it. Read in the page's read-only transaction, whose own snapshot the
 * report leaves out.
 */
final class HorizonPanel {

    private static final int QUERY = 300;

    private final Reads reads;

    HorizonPanel(Reads reads) {
        this.reads = reads;
    }

    Html render() {
        return reads.section("horizon holders", this::holders);
    }

    private Html holders() {
        List<HorizonHolder> holders = reads.run(tx -> new HorizonReport(tx).holders());
        if (holders.isEmpty()) {
            return Html.raw("<p class=\"notice\" id=\"no-horizon-holders\">Nothing holds the MVCC horizon back: "
                    + "VACUUM can remove every dead row.</p>");
        }
        List<Html> rows = new ArrayList<>();
        for (HorizonHolder h : holders) {
            rows.add(Html.of(
                    "<tr data-kind=\"{}\"><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td>"
                            + "<td>{}</td><td><code>{}</code></td></tr>",
                    h.kind(),
                    h.identity(),
                    h.age().map(Format::age).orElse("unknown"),
                    Format.count(h.xminAge()),
                    h.state().orElse(""),
                    h.since().map(Format::time).orElse(""),
                    Format.firstLine(h.query().orElse(""), QUERY)));
        }
        return Html.of(
                "<p class=\"hint\">While one of these holds it, no VACUUM removes rows that died since: the queue's dead "
                        + "rows pile up and claims slow down (<code>docs/operations.md</code>, \"The MVCC horizon\").</p>"
                        + "<table class=\"horizon\" id=\"horizon-holders\"><thead><tr><th>holder</th><th>held for</th>"
                        + "<th>transactions since its xmin</th><th>state</th><th>since</th><th>query</th></tr></thead>"
                        + "<tbody>{}</tbody></table>",
                Html.join(rows));
    }
}
