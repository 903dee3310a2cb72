package dev.locksmith.it.support;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.locksmith.provisioning.ScratchDatabase;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A TCP proxy on the loopback interface between PgJDBC and PostgreSQL that can cut a
 * connection exactly at its next {@code COMMIT}: before forwarding it (the server never sees
 * it, so the transaction aborts) or after the server has answered it (the transaction
 * committed, but the client never hears so). It can also refuse or drop every connection, to
 * play a database outage. Connections use {@code sslmode=disable} and
 * {@code prepareThreshold=0} so that the proxy can see the statements: a server-prepared
 * {@code COMMIT} would be sent by statement name only.
 */
public final class CuttingProxy implements AutoCloseable {

    /** Where the next COMMIT is cut. */
    public enum Cut {
        NONE,
        BEFORE_COMMIT,
        AFTER_COMMIT
    }

    private static final Pattern URL = Pattern.compile("jdbc:postgresql://([^/:?]+)(?::(\\d+))?/([^?]*)(?:\\?(.*))?");
    private static final byte[] COMMIT = "COMMIT".getBytes(StandardCharsets.US_ASCII);

    private final ServerSocket listener;
    private final String targetHost;
    private final int targetPort;
    private final String database;
    private final String parameters;
    private final List<Link> links = new CopyOnWriteArrayList<>();
    private volatile Cut armed = Cut.NONE;
    private volatile boolean down;
    private volatile int cuts;

    /** A proxy in front of the server of {@code jdbcUrl}. */
    public CuttingProxy(String jdbcUrl) throws IOException {
        Matcher m = URL.matcher(jdbcUrl);
        if (!m.matches()) {
            throw new IllegalArgumentException("not a PostgreSQL JDBC URL: " + jdbcUrl);
        }
        targetHost = m.group(1);
        targetPort = m.group(2) == null ? 5432 : Integer.parseInt(m.group(2));
        database = m.group(3);
        parameters = m.group(4) == null ? "" : m.group(4).replaceAll("(^|&)(ssl[a-z]*|prepareThreshold)=[^&]*", "");
        listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::accept, "cutting-proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** The URL to connect through the proxy. */
    public String jdbcUrl() {
        String extra = parameters.isEmpty() ? "" : "&" + parameters.replaceAll("^&", "");
        return "jdbc:postgresql://127.0.0.1:" + listener.getLocalPort() + "/" + database
                + "?sslmode=disable&prepareThreshold=0" + extra;
    }

    /**
     * A HikariCP pool of up to {@code size} connections to {@code database} through this proxy,
     * waiting at most {@code connectionTimeoutMillis} for a connection (so that an outage fails
     * fast rather than after Hikari's 30 s default).
     */
    public HikariDataSource pool(ScratchDatabase database, int size, long connectionTimeoutMillis) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl());
        config.setUsername(database.user());
        config.setPassword(database.password());
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(0);
        config.setConnectionTimeout(connectionTimeoutMillis);
        return new HikariDataSource(config);
    }

    /** Cuts the first connection that sends a COMMIT from now on, as {@code cut} says. */
    public void cutAtNextCommit(Cut cut) {
        armed = cut;
    }

    /** How many connections were cut at a COMMIT so far. */
    public int cuts() {
        return cuts;
    }

    /**
     * Drops every open connection and refuses new ones until {@link #up()}. A connection being
     * accepted meanwhile is refused too: it is registered, or refused, under the same lock.
     */
    public synchronized void down() {
        down = true;
        links.forEach(Link::close);
    }

    /** Refuses new connections, keeping the open ones, until {@link #up()}. */
    public synchronized void refuseNew() {
        down = true;
    }

    /** Accepts connections again. */
    public synchronized void up() {
        down = false;
    }

    @Override
    public void close() throws IOException {
        listener.close();
        links.forEach(Link::close);
    }

    private void accept() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                if (down) {
                    client.close();
                    continue;
                }
                Socket server = new Socket(targetHost, targetPort);
                Link link = new Link(client, server);
                synchronized (this) {
                    // down() may have run while the server connection was made: that outage
                    // must not let this one through (a heartbeat on it would keep a lease alive)
                    if (down) {
                        link.close();
                        continue;
                    }
                    links.add(link);
                }
                link.start();
            } catch (IOException e) {
                // closed, or the server refused: the client sees its connection fail
            }
        }
    }

    /** One proxied connection: two pumps. */
    private final class Link {
        private final Socket client;
        private final Socket server;
        private volatile boolean commitForwarded;

        Link(Socket client, Socket server) {
            this.client = client;
            this.server = server;
        }

        void start() {
            pump("up", client, server, true);
            pump("down", server, client, false);
        }

        private void pump(String name, Socket from, Socket to, boolean upstream) {
            Thread t = new Thread(
                    () -> {
                        byte[] buffer = new byte[65536];
                        try (InputStream in = from.getInputStream();
                                OutputStream out = to.getOutputStream()) {
                            int n;
                            while ((n = in.read(buffer)) > 0) {
                                if (upstream && armed != Cut.NONE && contains(buffer, n, COMMIT)) {
                                    Cut cut = armed;
                                    armed = Cut.NONE;
                                    if (cut == Cut.BEFORE_COMMIT) {
                                        cuts++;
                                        close();
                                        return;
                                    }
                                    commitForwarded = true;
                                }
                                if (!upstream && commitForwarded) {
                                    // the server answered the COMMIT: it is done; the client never learns it
                                    cuts++;
                                    close();
                                    return;
                                }
                                out.write(buffer, 0, n);
                                out.flush();
                            }
                        } catch (IOException e) {
                            // either side closed
                        } finally {
                            close();
                        }
                    },
                    "cutting-proxy-" + name);
            t.setDaemon(true);
            t.start();
        }

        void close() {
            closeQuietly(client);
            closeQuietly(server);
            links.remove(this);
        }
    }

    private static boolean contains(byte[] buffer, int length, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (buffer[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // already closed
        }
    }
}
