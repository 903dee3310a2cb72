package dev.locksmith.internal;

import org.jooq.Configuration;
import org.jooq.conf.ParamCastMode;
import org.jooq.conf.ParamType;
import org.jooq.conf.RenderNameCase;
import org.jooq.conf.Settings;
import org.jooq.conf.StatementType;
import org.jspecify.annotations.Nullable;

/**
 * The jOOQ settings a {@link RenderedQuery} depends on, pinned over a copy of the user's, so that
 * no legitimate setting of theirs (a {@code $} named-parameter prefix, static statements, inlined
 * bind values, upper-case names) can break it; everything else of theirs is kept.
 * <b>Internal: not API.</b>
 */
final class PinnedSettings {

    /** The last user settings seen at execution and their pinned copy; a benign race at worst. */
    private record Pinned(Settings user, Settings pinned) {}

    private static volatile @Nullable Pinned last;

    private PinnedSettings() {}

    /**
     * For rendering once: named parameters as {@code :name} (which {@link RenderedQuery#parse}
     * reads), in a prepared statement (a static one inlines them), cast as the DSL types say;
     * identifiers in the case they were created in and qualified with the schema (locksmith's
     * tables are in their own schema, never on the user's {@code search_path}).
     */
    static Settings forRendering(Settings user) {
        return ((Settings) user.clone())
                .withParamType(ParamType.NAMED)
                .withRenderNamedParamPrefix(":")
                .withStatementType(StatementType.PREPARED_STATEMENT)
                .withParamCastMode(ParamCastMode.DEFAULT)
                .withRenderNameCase(RenderNameCase.AS_IS)
                .withRenderSchema(true);
    }

    /**
     * {@code configuration}, or a copy of it whose settings send the pre-rendered SQL as it is:
     * indexed placeholders in a prepared statement. Free (no copy) for the default settings; a
     * derived configuration, whose settings copy is cached, otherwise.
     */
    static Configuration forExecution(Configuration configuration) {
        Settings user = configuration.settings();
        if (executesAsRendered(user)) {
            return configuration;
        }
        Pinned pinned = last;
        // Identity, not equals: the cache is for the very Settings object of a configuration.
        if (pinned == null || !isSame(pinned.user(), user)) {
            pinned = new Pinned(
                    user,
                    ((Settings) user.clone())
                            .withParamType(ParamType.INDEXED)
                            .withStatementType(StatementType.PREPARED_STATEMENT)
                            .withParamCastMode(ParamCastMode.DEFAULT));
            last = pinned;
        }
        return configuration.derive(pinned.pinned());
    }

    private static boolean executesAsRendered(Settings settings) {
        ParamType paramType = settings.getParamType();
        StatementType statementType = settings.getStatementType();
        ParamCastMode castMode = settings.getParamCastMode();
        return (paramType == null || paramType == ParamType.INDEXED)
                && (statementType == null || statementType == StatementType.PREPARED_STATEMENT)
                && (castMode == null || castMode == ParamCastMode.DEFAULT);
    }

    @SuppressWarnings("ReferenceEquality") // identity is the point: see forExecution
    private static boolean isSame(Settings a, Settings b) {
        return a == b;
    }
}
