package dev.locksmith.spring;

import dev.locksmith.jobs.BatchJobHandler;
import dev.locksmith.jobs.JobHandler;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.util.ClassUtils;

/**
 * Every {@link LocksmithHandler} of the context, found from the bean definitions (no handler bean
 * is created here), each checked: a valid queue name, one handler per queue, a bean of a handler
 * type or a method of a handler signature, and a mode that fits (a {@code BatchJobHandler} runs in
 * transactional mode only). A failure names the handler and the property.
 */
final class LocksmithHandlers {

    private final Map<String, HandlerDefinition> byQueue;

    private LocksmithHandlers(Map<String, HandlerDefinition> byQueue) {
        this.byQueue = byQueue;
    }

    /** {@return the handlers by queue name, in name order} */
    Map<String, HandlerDefinition> byQueue() {
        return byQueue;
    }

    static LocksmithHandlers scan(ConfigurableListableBeanFactory beans, LocksmithProperties properties) {
        Map<String, HandlerDefinition> byQueue = new TreeMap<>();
        for (HandlerDefinition handler : find(beans)) {
            HandlerDefinition other = byQueue.putIfAbsent(handler.queue(), handler);
            if (other != null) {
                throw new IllegalStateException("queue '" + handler.queue() + "' has two @LocksmithHandler: "
                        + other.description() + " and " + handler.description() + "; one queue has one handler");
            }
            LocksmithProperties.Queue settings = properties.queue(handler.queue());
            if (handler.batch() && settings.mode() == LocksmithProperties.Queue.Mode.LEASED) {
                throw new IllegalStateException("locksmith.queues." + handler.queue() + ".mode is leased, but the "
                        + "handler of queue '" + handler.queue() + "' (" + handler.description() + ") handles "
                        + "batches, which run in transactional mode only: set it to transactional, or take one Job");
            }
        }
        return new LocksmithHandlers(java.util.Collections.unmodifiableMap(byQueue));
    }

    /** Every {@link LocksmithHandler} of the bean definitions, each with a valid queue name and a handler type or signature. */
    static List<HandlerDefinition> find(ConfigurableListableBeanFactory beans) {
        List<HandlerDefinition> found = new ArrayList<>();
        for (String name : beans.getBeanNamesForType(Object.class, true, false)) {
            Class<?> type = beans.getType(name, false);
            if (type == null) {
                continue;
            }
            LocksmithHandler onBean = beans.findAnnotationOnBean(name, LocksmithHandler.class, false);
            if (onBean != null) {
                found.add(beanHandler(name, type, onBean));
            }
            Class<?> userType = ClassUtils.getUserClass(type);
            if (!AnnotationUtils.isCandidateClass(userType, LocksmithHandler.class)) {
                continue;
            }
            Map<Method, LocksmithHandler> methods =
                    MethodIntrospector.selectMethods(userType, (MethodIntrospector.MetadataLookup<LocksmithHandler>)
                            m -> AnnotatedElementUtils.hasAnnotation(m, Bean.class)
                                    ? null
                                    : AnnotatedElementUtils.findMergedAnnotation(m, LocksmithHandler.class));
            methods.entrySet().stream()
                    .sorted(Map.Entry.comparingByKey(java.util.Comparator.comparing(Method::toGenericString)))
                    .forEach(e -> found.add(methodHandler(name, e.getKey(), e.getValue())));
        }
        return found;
    }

    private static HandlerDefinition beanHandler(String name, Class<?> type, LocksmithHandler annotation) {
        String queue = checkedQueue(annotation, "bean '" + name + "'");
        boolean job = JobHandler.class.isAssignableFrom(type);
        boolean batch = BatchJobHandler.class.isAssignableFrom(type);
        if (job == batch) {
            throw new IllegalStateException(
                    "bean '" + name + "' (" + type.getName() + ") is annotated @LocksmithHandler(queue = \""
                            + queue + "\") but is "
                            + (job
                                    ? "both a JobHandler and a BatchJobHandler"
                                    : "neither a JobHandler " + "nor a BatchJobHandler")
                            + "; or annotate a method taking (Job, DSLContext) or (List<Job>, DSLContext)");
        }
        return new HandlerDefinition(queue, name, null, batch);
    }

    private static HandlerDefinition methodHandler(String name, Method method, LocksmithHandler annotation) {
        String where = "method " + method.getDeclaringClass().getSimpleName() + "." + method.getName() + " of bean '"
                + name + "'";
        String queue = checkedQueue(annotation, where);
        Boolean batch = HandlerDefinition.takesBatch(method);
        if (batch == null) {
            throw new IllegalStateException(
                    where + " is annotated @LocksmithHandler(queue = \"" + queue + "\") but takes ("
                            + method.getGenericParameterTypes().length + " parameters: "
                            + java.util.Arrays.stream(method.getGenericParameterTypes())
                                    .map(java.lang.reflect.Type::getTypeName)
                                    .toList()
                            + "); a handler method takes (Job, DSLContext) or (List<Job>, DSLContext)");
        }
        return new HandlerDefinition(queue, name, method, batch);
    }

    private static String checkedQueue(LocksmithHandler annotation, String where) {
        try {
            LocksmithProperties.requireQueueName("@LocksmithHandler(queue) on " + where, annotation.queue());
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
        return annotation.queue();
    }
}
