package dev.locksmith;

import dev.locksmith.internal.SchemaMapping;
import java.util.Objects;
import org.jooq.DSLContext;
import org.jooq.conf.MappedSchema;
import org.jooq.conf.RenderMapping;
import org.jooq.conf.Settings;
import org.jooq.impl.DSL;
import org.jspecify.annotations.Nullable;

/**
 * Which PostgreSQL schema locksmith's tables are rendered in. The generated tables belong to
 * {@value #DEFAULT}; a database migrated into another schema
 * ({@code LocksmithSchema.migrate(dataSource, schema, modules)}, or the changelog parameter
 * {@code locksmith.schema}) needs jOOQ to render that name instead, through a
 * {@link RenderMapping} from {@value #DEFAULT} to it.
 *
 * <p>Build the repositories with {@link #using(DSLContext, String)}: every repository takes the
 * mapping of the {@code DSLContext} it was built with, renders its statements with it, and
 * applies it to each {@code DSLContext} you pass to its methods, so your transactions need no
 * settings of their own. If your jOOQ {@code Settings} map the schema already (for example in a
 * Spring {@code DefaultConfigurationCustomizer}, with {@link #settings(Settings, String)}), the
 * repositories use that.
 */
public final class TableSchema {

    /** The schema of the generated tables, and the default of the changelog. */
    public static final String DEFAULT = "locksmith";

    private TableSchema() {}

    /**
     * A {@code DSLContext} like {@code dsl} whose settings render locksmith's tables in
     * {@code schema}; {@code dsl} itself when {@code schema} is {@value #DEFAULT}.
     *
     * @param dsl the application's {@code DSLContext}; its connection provider, listeners and
     *     other settings are kept
     * @param schema the schema the locksmith changelog was applied to
     * @return a {@code DSLContext} to build the repositories with (and to run your own
     *     statements on locksmith's tables)
     * @throws IllegalArgumentException when {@code schema} is not a lower-case unquoted identifier
     *     of at most 63 bytes (the full rules, reserved words included, are the schema module's
     *     {@code SchemaName}, checked when migrating)
     */
    public static DSLContext using(DSLContext dsl, String schema) {
        Objects.requireNonNull(dsl, "dsl");
        String target = SchemaMapping.requireName(schema);
        if (target.equals(DEFAULT) && mappedSchema(dsl.settings()).equals(DEFAULT)) {
            return dsl;
        }
        return DSL.using(dsl.configuration().derive(settings(dsl.settings(), target)));
    }

    /**
     * A copy of {@code base} that renders locksmith's tables in {@code schema}, for applications
     * that build their jOOQ {@code Settings} themselves.
     *
     * @param base the settings to start from; not modified
     * @param schema the schema the locksmith changelog was applied to; {@value #DEFAULT} removes
     *     any mapping of locksmith's schema that {@code base} has
     * @return a new {@code Settings} whose render mapping maps {@value #DEFAULT} to {@code schema},
     *     with {@code base}'s other mappings and settings unchanged
     * @throws IllegalArgumentException when {@code schema} is not a valid schema name (see
     *     {@link #using(DSLContext, String)})
     */
    public static Settings settings(Settings base, String schema) {
        Objects.requireNonNull(base, "base");
        String target = SchemaMapping.requireName(schema);
        Settings copy = (Settings) base.clone();
        RenderMapping mapping = copy.getRenderMapping() == null
                ? new RenderMapping()
                : (RenderMapping) copy.getRenderMapping().clone();
        mapping.getSchemata().removeIf(m -> DEFAULT.equals(m.getInput()));
        if (!target.equals(DEFAULT)) {
            mapping.getSchemata().add(new MappedSchema().withInput(DEFAULT).withOutput(target));
        }
        return copy.withRenderMapping(mapping);
    }

    /**
     * The schema {@code settings} render locksmith's tables in.
     *
     * @param settings a {@code DSLContext}'s settings; null counts as no mapping
     * @return the output of the render mapping for {@value #DEFAULT}, or {@value #DEFAULT} itself
     *     when there is none
     */
    public static String mappedSchema(@Nullable Settings settings) {
        RenderMapping mapping = settings == null ? null : settings.getRenderMapping();
        if (mapping != null) {
            for (MappedSchema schema : mapping.getSchemata()) {
                if (DEFAULT.equals(schema.getInput()) && schema.getOutput() != null) {
                    return schema.getOutput();
                }
            }
        }
        return DEFAULT;
    }
}
