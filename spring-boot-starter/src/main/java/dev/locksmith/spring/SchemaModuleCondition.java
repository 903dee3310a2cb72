package dev.locksmith.spring;

import dev.locksmith.schema.SchemaModule;
import java.util.EnumSet;
import java.util.Set;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Matches when {@code locksmith.schema.modules} (all modules when unset) includes a module: the
 * gauges and health checks of a module whose tables the application does not have would fail on
 * every read.
 */
abstract class SchemaModuleCondition implements Condition {

    private final SchemaModule module;

    SchemaModuleCondition(SchemaModule module) {
        this.module = module;
    }

    @Override
    public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
        return modules(Binder.get(context.getEnvironment())).contains(module);
    }

    static Set<SchemaModule> modules(Binder binder) {
        return binder.bind("locksmith.schema.modules", Bindable.setOf(SchemaModule.class))
                .orElse(EnumSet.allOf(SchemaModule.class));
    }

    /** The {@code queue} module. */
    static class Queue extends SchemaModuleCondition {
        Queue() {
            super(SchemaModule.QUEUE);
        }
    }

    /** The {@code pool} module. */
    static final class Pool extends SchemaModuleCondition {
        Pool() {
            super(SchemaModule.POOL);
        }
    }
}
