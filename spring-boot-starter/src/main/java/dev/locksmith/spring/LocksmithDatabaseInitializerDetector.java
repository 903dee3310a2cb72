package dev.locksmith.spring;

import java.util.Set;
import org.springframework.boot.sql.init.dependency.AbstractBeansOfTypeDatabaseInitializerDetector;

/**
 * Tells Spring Boot that {@link LocksmithSchemaMigration} initializes the database, so that the
 * beans Boot knows to use it ({@code DSLContext}, {@code JdbcTemplate}, {@code EntityManagerFactory})
 * are created after the migration (registered in {@code META-INF/spring.factories}).
 */
final class LocksmithDatabaseInitializerDetector extends AbstractBeansOfTypeDatabaseInitializerDetector {

    @Override
    protected Set<Class<?>> getDatabaseInitializerBeanTypes() {
        return Set.of(LocksmithSchemaMigration.class);
    }
}
