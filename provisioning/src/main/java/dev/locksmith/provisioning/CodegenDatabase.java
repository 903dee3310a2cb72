package dev.locksmith.provisioning;

import dev.locksmith.schema.LocksmithSchema;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The provisioning step of code generation, run by {@code exec:java} in the Maven JVM just
 * before {@code jooq-codegen-maven}: obtains a server, creates a uniquely named scratch
 * database, applies the changelog, and writes a jOOQ code generation configuration pointing
 * at it. The scratch database (and an embedded server) is dropped when the Maven JVM exits,
 * whether generation succeeded or not.
 *
 * <p>Arguments: the configuration file to write, the target directory for generated sources,
 * and the target package.
 */
public final class CodegenDatabase {

    private static final Logger LOG = LoggerFactory.getLogger(CodegenDatabase.class);

    /** Liquibase logs each change set at INFO through java.util.logging; keep build logs short. */
    private static final java.util.logging.Logger LIQUIBASE_LOG = java.util.logging.Logger.getLogger("liquibase");

    static {
        LIQUIBASE_LOG.setLevel(java.util.logging.Level.WARNING);
    }

    private CodegenDatabase() {}

    /**
     * Entry point for {@code exec:java}; see the class comment for the arguments.
     *
     * @param args the jOOQ configuration file to write, the directory and the package to generate into
     * @throws IOException when the configuration file cannot be written
     */
    public static void main(String[] args) throws IOException {
        if (args.length != 3) {
            throw new IllegalArgumentException("usage: CodegenDatabase <config file> <target directory> <package>");
        }
        PostgresServer server = PostgresServer.start();
        try {
            ScratchDatabase database = server.scratch("locksmith_codegen").create("schema");
            LocksmithSchema.migrate(database.dataSource());
            Path config = Path.of(args[0]);
            Files.createDirectories(config.toAbsolutePath().getParent());
            Files.writeString(config, configuration(database, args[1], args[2]), StandardCharsets.UTF_8);
            LOG.info("codegen database {} migrated; jOOQ configuration at {}", database.name(), config);
        } catch (RuntimeException | IOException e) {
            server.close();
            throw e;
        }
        // Left open on purpose: jooq-codegen-maven reads this database next. The server's
        // shutdown hook drops the scratch database when the Maven JVM exits.
    }

    static String configuration(ScratchDatabase database, String targetDirectory, String packageName) {
        return """
                <?xml version="1.0" encoding="UTF-8"?>
                <configuration xmlns="http://www.jooq.org/xsd/jooq-codegen-3.19.0.xsd">
                  <jdbc>
                    <driver>org.postgresql.Driver</driver>
                    <url>%s</url>
                    <user>%s</user>
                    <password>%s</password>
                  </jdbc>
                  <generator>
                    <name>org.jooq.codegen.JavaGenerator</name>
                    <strategy>
                      <matchers>
                        <tables>
                          <table>
                            <tableClass>
                              <transform>PASCAL</transform>
                              <expression>$0_table</expression>
                            </tableClass>
                          </table>
                        </tables>
                      </matchers>
                    </strategy>
                    <database>
                      <name>org.jooq.meta.postgres.PostgresDatabase</name>
                      <inputSchema>locksmith</inputSchema>
                      <includes>.*</includes>
                      <excludes>databasechangelog|databasechangeloglock|job_history_.*|jobs_slot[0-9]+|channel_account_leases_slot[0-9]+|jobs_unique_key_take|jobs_unique_key_give_back</excludes>
                    </database>
                    <generate>
                      <records>true</records>
                      <pojos>false</pojos>
                      <daos>false</daos>
                      <javaTimeTypes>true</javaTimeTypes>
                      <globalObjectReferences>true</globalObjectReferences>
                      <generatedAnnotation>false</generatedAnnotation>
                      <comments>true</comments>
                    </generate>
                    <target>
                      <packageName>%s</packageName>
                      <directory>%s</directory>
                      <clean>true</clean>
                    </target>
                  </generator>
                </configuration>
                """.formatted(
                        xml(database.jdbcUrl()),
                        xml(database.user()),
                        xml(database.password() == null ? "" : database.password()),
                        xml(packageName),
                        xml(targetDirectory));
    }

    private static String xml(String text) {
        return text.replace("&", "&amp;")
                .replace("<", "&lt;")
                .replace(">", "&gt;")
                .replace("\"", "&quot;");
    }
}
