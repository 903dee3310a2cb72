package dev.locksmith.spring;

import dev.locksmith.jobs.BatchJobHandler;
import dev.locksmith.jobs.Job;
import dev.locksmith.jobs.JobHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.List;
import org.jooq.DSLContext;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.util.ReflectionUtils;

/**
 * One {@link LocksmithHandler}: a bean that is a handler, or a method of a bean. Found from the
 * bean definitions, before any handler bean is created; {@link #jobHandler} and {@link #batchHandler} get the bean.
 *
 * @param queue the queue it handles
 * @param beanName the bean
 * @param method the annotated method, or null when the bean itself is the handler
 * @param batch whether it handles batches ({@code BatchJobHandler}, or a method taking a list)
 */
record HandlerDefinition(
        String queue, String beanName, @Nullable Method method, boolean batch) {

    /** {@return the handler, for messages: the bean, and the method when there is one} */
    String description() {
        return method == null
                ? "bean '" + beanName + "'"
                : "method " + method.getDeclaringClass().getSimpleName() + "." + method.getName() + " of bean '"
                        + beanName + "'";
    }

    /** The handler of a leased worker: the bean itself, or a call of the method. */
    JobHandler jobHandler(BeanFactory beans) {
        Object bean = beans.getBean(beanName);
        Method target = method;
        if (target == null) {
            return (JobHandler) bean;
        }
        Method invocable = invocable(target, bean);
        return (job, tx) -> invoke(invocable, bean, job, tx);
    }

    /** The handler of a transactional worker; a {@code JobHandler} gets each job of the batch in turn. */
    BatchJobHandler batchHandler(BeanFactory beans) {
        if (!batch) {
            JobHandler single = jobHandler(beans);
            return (jobs, tx) -> {
                for (Job job : jobs) {
                    single.handle(job, tx);
                }
            };
        }
        Object bean = beans.getBean(beanName);
        Method target = method;
        if (target == null) {
            return (BatchJobHandler) bean;
        }
        Method invocable = invocable(target, bean);
        return (jobs, tx) -> invoke(invocable, bean, jobs, tx);
    }

    private static Method invocable(Method method, Object bean) {
        Method invocable = AopUtils.selectInvocableMethod(method, bean.getClass());
        ReflectionUtils.makeAccessible(invocable);
        return invocable;
    }

    /** Calls the method; what it throws reaches the worker as thrown. */
    private static void invoke(Method method, Object bean, Object jobs, DSLContext tx) throws Exception {
        try {
            method.invoke(bean, jobs, tx);
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof Exception exception) {
                throw exception;
            }
            if (cause instanceof Error error) {
                throw error;
            }
            throw e;
        }
    }

    /** Whether {@code method} takes {@code (List<Job>, DSLContext)}; else it must take {@code (Job, DSLContext)}. */
    static @Nullable Boolean takesBatch(Method method) {
        Class<?>[] types = method.getParameterTypes();
        if (types.length != 2 || types[1] != DSLContext.class) {
            return null;
        }
        if (types[0] == Job.class) {
            return false;
        }
        if (types[0] == List.class
                && method.getGenericParameterTypes()[0] instanceof java.lang.reflect.ParameterizedType list
                && list.getActualTypeArguments()[0] == Job.class) {
            return true;
        }
        return null;
    }
}
