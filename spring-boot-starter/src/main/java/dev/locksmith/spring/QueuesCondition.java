package dev.locksmith.spring;

import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Matches when the application has a queue to watch: a {@link LocksmithHandler}, or an entry under
 * {@code locksmith.queues}. Queue gauges and health checks of no queue would be empty (and
 * {@code QueueDepthMetrics} refuses an empty list). Evaluated after the application's own bean
 * definitions are registered, as every auto-configuration condition is.
 */
final class QueuesCondition extends SchemaModuleCondition.Queue {

    @Override
    public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
        if (!super.matches(context, metadata)) {
            return false;
        }
        boolean configured = Binder.get(context.getEnvironment())
                .bind("locksmith.queues", Bindable.mapOf(String.class, String.class))
                .map(queues -> !queues.isEmpty())
                .orElse(false);
        ConfigurableListableBeanFactory beans = context.getBeanFactory();
        return configured || (beans != null && !LocksmithHandlers.find(beans).isEmpty());
    }
}
