package org.lethe.neo4j;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.connectors.HttpsConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;

/**
 * Runs the Neo4j community database embedded in this JVM, with the Bolt
 * connector on a loopback port and authentication enabled: a real Neo4j
 * server for the tests and for developers without Docker.
 *
 * <pre>
 * java -cp launcher.jar:lib/* org.lethe.neo4j.Launcher --home DIR --port 7687 [--host 127.0.0.1]
 *     (the password of user neo4j is read from the environment variable NEO4J_PASSWORD)
 * </pre>
 *
 * The data lives under DIR (DIR/data, DIR/logs). The password of the user
 * "neo4j" is set at every start, so a data directory can be reused with
 * another password. When the database is up, the line "neo4j ready on
 * bolt://HOST:PORT" is printed and DIR/ready is written; SIGTERM shuts the
 * database down cleanly.
 */
public final class Launcher {
    private Launcher() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> opt = new java.util.HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (!args[i].startsWith("--")) {
                usage("unexpected argument " + args[i]);
            }
            opt.put(args[i].substring(2), args[i + 1]);
        }
        if (args.length % 2 != 0) {
            usage("missing value for " + args[args.length - 1]);
        }
        String home = opt.get("home");
        if (home == null) {
            usage("--home is required");
        }
        String host = opt.getOrDefault("host", "127.0.0.1");
        int port = Integer.parseInt(opt.getOrDefault("port", "7687"));
        String password = System.getenv("NEO4J_PASSWORD");
        if (password == null || password.length() < 8) {
            usage("NEO4J_PASSWORD must be set to at least 8 characters");
        }
        long pageCache = Long.parseLong(opt.getOrDefault("pagecache-mb", "128")) << 20;

        Path homeDir = Path.of(home).toAbsolutePath();
        Files.createDirectories(homeDir);
        Path ready = homeDir.resolve("ready");
        Files.deleteIfExists(ready);

        DatabaseManagementServiceBuilder builder = new DatabaseManagementServiceBuilder(homeDir);
        String conf = opt.get("conf");
        if (conf != null) {
            builder.loadPropertiesFromFile(Path.of(conf).toAbsolutePath());
        }
        DatabaseManagementService dbms = builder
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress(host, port))
                .setConfig(BoltConnector.advertised_address, new SocketAddress(host, port))
                .setConfig(HttpConnector.enabled, false)
                .setConfig(HttpsConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.auth_enabled, true)
                .setConfig(GraphDatabaseSettings.pagecache_memory, pageCache)
                .setConfig(GraphDatabaseSettings.shutdown_transaction_end_timeout, Duration.ofSeconds(2))
                .build();

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                Files.deleteIfExists(ready);
            } catch (Exception ignored) {
                // best effort
            }
            dbms.shutdown();
            stopped.countDown();
        }, "neo4j-shutdown"));

        setPassword(dbms, password);

        Path tmp = homeDir.resolve("ready.tmp");
        Files.writeString(tmp, "bolt://" + host + ":" + port + "\n");
        Files.move(tmp, ready, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        System.out.println("neo4j ready on bolt://" + host + ":" + port + " (home " + homeDir + ")");
        System.out.flush();
        stopped.await();
    }

    /** Sets the password of user neo4j without requiring a change at login. */
    private static void setPassword(DatabaseManagementService dbms, String password) {
        GraphDatabaseService system = dbms.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME);
        try {
            system.executeTransactionally(
                    "ALTER USER neo4j SET PASSWORD $pw CHANGE NOT REQUIRED", Map.of("pw", password));
        } catch (RuntimeException e) {
            // Setting the password it has already fails: that is fine.
            String msg = String.valueOf(e.getMessage()).toLowerCase();
            if (!msg.contains("same")) {
                throw e;
            }
        }
    }

    private static void usage(String why) {
        System.err.println("neo4j launcher: " + why);
        System.err.println("usage: NEO4J_PASSWORD=... java -cp launcher.jar:lib/* org.lethe.neo4j.Launcher --home DIR [--host 127.0.0.1] [--port 7687] [--pagecache-mb 128] [--conf FILE]");
        System.exit(2);
    }
}
