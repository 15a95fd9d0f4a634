// A SolrCloud cluster on loopback for sandcrawler's tests (sandcrawler_testkit.solr_cluster,
// docs/operations.md "Solr test cluster"): ZooKeeper in this JVM, each Solr node in a JVM of
// its own, so that killing a node is a real crash (SIGKILL) and not Solr's clean shutdown.
//
//   java -cp CLASSES:LIBS/* SolrCloudLauncher cluster --base DIR [--nodes 2] [--node-heap 256m]
//        [--session-timeout-ms 10000] [--zk-port 0] [--ports 0,0]
//
// Ports 0 are free ports picked at start. A DIR used before (its zookeeper/ directory exists)
// is started again from its data: give the ports it had, as the nodes' names in ZooKeeper are
// host:port_solr and the replicas belong to those names.
//
// prints one JSON line once every node is in ZooKeeper's live_nodes,
//   {"urls": ["http://127.0.0.1:PORT/solr", ...], "zk_host": "127.0.0.1:PORT/solr", "pids": [...]}
// (pids: the node JVMs' process ids), then answers one JSON line per command read on stdin,
// {"ok": true, "pids": [...]} (null for a node that is down) or {"ok": false, "error": "..."}:
//
//   kill I     SIGKILL node I's JVM: no clean shutdown, its live_nodes entry and leader
//              elections stay in ZooKeeper until its session expires (--session-timeout-ms)
//   stop I     node I shut down cleanly (Solr gives up its leaderships and says it is down)
//   start I    node I again, same port, same solr home (its cores and index on disk)
//   restart    every node stopped cleanly, ZooKeeper stopped, ZooKeeper started again on the
//              same port from the same data, every node started again on its port with its data
//   stop       everything shut down, exit 0
//
// On end of stdin (the test process is gone) every node is killed and the launcher exits.
// The nodes' logs (warnings and errors) go to stderr: stdout carries only the protocol.
//
// A node runs as `SolrCloudLauncher node --home DIR --port P --zk HOST:PORT/solr`: it prints
// {"port": P} once Jetty and Solr are up, shuts down cleanly on "stop" and halts at once on end
// of stdin (its launcher is gone, even by SIGKILL).

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.Writer;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.core.appender.ConsoleAppender;
import org.apache.logging.log4j.core.config.Configurator;
import org.apache.logging.log4j.core.config.builder.api.ConfigurationBuilder;
import org.apache.logging.log4j.core.config.builder.api.ConfigurationBuilderFactory;
import org.apache.logging.log4j.core.config.builder.impl.BuiltConfiguration;
import org.apache.solr.cloud.ZkTestServer;
import org.apache.solr.common.cloud.SolrZkClient;
import org.apache.solr.embedded.JettyConfig;
import org.apache.solr.embedded.JettySolrRunner;

public class SolrCloudLauncher {

  // the protocol's stream: System.out itself is pointed at stderr, so that nothing a library
  // prints can break a line the test kit reads
  private static PrintStream protocol;

  public static void main(String[] args) throws Exception {
    protocol = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    System.setOut(System.err);
    quietLogging();
    if (args.length > 0 && args[0].equals("node")) {
      runNode(args);
    } else if (args.length > 0 && args[0].equals("cluster")) {
      new SolrCloudLauncher(args).serve();
    } else {
      System.err.println("usage: SolrCloudLauncher cluster --base DIR [--nodes N] ...");
      System.exit(2);
    }
  }

  /** Warnings and errors on stderr: without a configuration log4j would log errors only, on stdout. */
  private static void quietLogging() {
    ConfigurationBuilder<BuiltConfiguration> b = ConfigurationBuilderFactory.newConfigurationBuilder();
    b.add(b.newAppender("stderr", "Console")
        .addAttribute("target", ConsoleAppender.Target.SYSTEM_ERR)
        .add(b.newLayout("PatternLayout").addAttribute("pattern", "%d{HH:mm:ss.SSS} %-5p [%t] %c{1} %m%n")));
    b.add(b.newRootLogger(Level.WARN).add(b.newAppenderRef("stderr")));
    // warnings at every start that say nothing about this cluster: ZooKeeper of every
    // connection a killed node leaves behind (that is the test), Solr of open ACLs, no
    // authentication, no solr.install.dir and no _default configset (a throwaway cluster
    // on loopback; the kit uploads its own configset), ZkTestServer of a source tree
    // it is not run from and of the "stat" command it allows itself
    for (String quiet : List.of("org.apache.zookeeper", "org.apache.solr.common.cloud.SolrZkClient",
        "org.apache.solr.core.NodeConfig", "org.apache.solr.core.CoreContainer",
        "org.apache.solr.cloud.ZkController", "org.apache.solr.core.ConfigSetService")) {
      b.add(b.newLogger(quiet, Level.ERROR));
    }
    // (its "stat" message is an error; its failures to start are exceptions)
    b.add(b.newLogger("org.apache.solr.cloud.ZkTestServer", Level.FATAL));
    Configurator.initialize(b.build());
    // Jersey (Solr's v2 API) logs through java.util.logging, to stderr, a warning at each start
    java.util.logging.Logger.getLogger("").setLevel(java.util.logging.Level.SEVERE);
  }

  private static String arg(String[] args, String name, String otherwise) {
    for (int i = 0; i + 1 < args.length; i++) {
      if (args[i].equals(name)) return args[i + 1];
    }
    if (otherwise == null) throw new IllegalArgumentException("missing " + name);
    return otherwise;
  }

  static String quote(String s) {
    StringBuilder out = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') out.append('\\').append(c);
      else if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
      else out.append(c);
    }
    return out.append('"').toString();
  }

  // ---------------------------------------------------------------------------------- a node

  private static void runNode(String[] args) throws Exception {
    Path home = Path.of(arg(args, "--home", null));
    int port = Integer.parseInt(arg(args, "--port", "0"));
    Files.createDirectories(home);
    // the node's own solr.xml in its home (Solr 9 deprecates reading it from ZooKeeper);
    // ${...} are the system properties the launcher sets on this JVM
    Files.writeString(home.resolve("solr.xml"), SOLR_XML);
    Properties props = new Properties();
    props.setProperty("zkHost", arg(args, "--zk", null));
    JettySolrRunner jetty = new JettySolrRunner(home.toString(), props,
        JettyConfig.builder().setContext("/solr").setPort(port).stopAtShutdown(true)
            // a port freed by a killed node can linger a moment
            .withPortRetryTime(30).build());
    jetty.start();
    protocol.println("{\"port\": " + jetty.getLocalPort() + "}");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line = in.readLine();
    if ("stop".equals(line)) {
      jetty.stop();
      protocol.println("{\"stopped\": true}");
      System.exit(0);
    }
    // the launcher is gone: no clean shutdown, as for the JVM it would have been
    Runtime.getRuntime().halt(1);
  }

  // A solr.xml of our own: SolrCloud on 127.0.0.1, ZooKeeper session timeout and timeouts of
  // the requests between nodes from system properties, no metrics (memory, start-up time).
  private static final String SOLR_XML = String.join("\n",
      "<solr>",
      "  <solrcloud>",
      "    <str name=\"host\">127.0.0.1</str>",
      "    <int name=\"hostPort\">${hostPort:8983}</int>",
      "    <str name=\"hostContext\">${hostContext:solr}</str>",
      "    <int name=\"zkClientTimeout\">${solr.zkclienttimeout:10000}</int>",
      "    <bool name=\"genericCoreNodeNames\">true</bool>",
      "    <int name=\"leaderVoteWait\">${leaderVoteWait:10000}</int>",
      "    <int name=\"distribUpdateConnTimeout\">${sandcrawler.connTimeout:5000}</int>",
      "    <int name=\"distribUpdateSoTimeout\">${sandcrawler.socketTimeout:60000}</int>",
      "    <str name=\"pkiHandlerPrivateKeyPath\">${pkiHandlerPrivateKeyPath:}</str>",
      "    <str name=\"pkiHandlerPublicKeyPath\">${pkiHandlerPublicKeyPath:}</str>",
      "  </solrcloud>",
      "  <shardHandlerFactory name=\"shardHandlerFactory\" class=\"HttpShardHandlerFactory\">",
      "    <int name=\"socketTimeout\">${sandcrawler.socketTimeout:60000}</int>",
      "    <int name=\"connTimeout\">${sandcrawler.connTimeout:5000}</int>",
      "  </shardHandlerFactory>",
      "  <metrics enabled=\"false\"/>",
      "</solr>",
      "");

  // ------------------------------------------------------------------------------- the cluster

  private final Path base;
  private final int count;
  private final String nodeHeap;
  private final int sessionTimeoutMs;
  private final String javaBinary;
  private final String classpath;
  private ZkTestServer zk;
  private int zkPort;
  private final int[] ports;
  private final Process[] procs;
  private final Writer[] stdins;
  private final BufferedReader[] stdouts;

  SolrCloudLauncher(String[] args) {
    base = Path.of(arg(args, "--base", null)).toAbsolutePath();
    count = Integer.parseInt(arg(args, "--nodes", "2"));
    nodeHeap = arg(args, "--node-heap", "256m");
    sessionTimeoutMs = Integer.parseInt(arg(args, "--session-timeout-ms", "10000"));
    javaBinary = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    classpath = System.getProperty("java.class.path");
    ports = new int[count];
    String[] given = arg(args, "--ports", "").split(",");
    for (int i = 0; i < count && i < given.length; i++) {
      if (!given[i].isEmpty()) ports[i] = Integer.parseInt(given[i]);
    }
    zkPort = Integer.parseInt(arg(args, "--zk-port", "0"));
    procs = new Process[count];
    stdins = new Writer[count];
    stdouts = new BufferedReader[count];
  }

  private String zkHost() {
    return "127.0.0.1:" + zkPort + "/solr";
  }

  private String url(int i) {
    return "http://127.0.0.1:" + ports[i] + "/solr";
  }

  private void startZk(boolean fresh) throws Exception {
    zk = new ZkTestServer(base.resolve("zookeeper"), zkPort);
    zk.setViolationReportAction(ZkTestServer.LimitViolationAction.IGNORE);
    // fresh: an empty /solr chroot; again (restart): the data on disk as it was
    zk.run(fresh);
    zkPort = zk.getPort();
  }

  void serve() throws Exception {
    Runtime.getRuntime().addShutdownHook(new Thread(this::killAll));
    startZk(!Files.exists(base.resolve("zookeeper")));
    startNodes();
    StringBuilder urls = new StringBuilder();
    for (int i = 0; i < count; i++) urls.append(i == 0 ? "" : ", ").append(quote(url(i)));
    protocol.println("{\"urls\": [" + urls + "], \"zk_host\": " + quote(zkHost())
        + ", \"pids\": " + pids() + "}");

    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      String[] words = line.trim().split("\\s+");
      try {
        switch (words[0]) {
          case "kill":
            killNode(node(words));
            ok();
            break;
          case "stop":
            if (words.length == 1) {
              stopAll();
              ok();
              System.exit(0);
            }
            stopNode(node(words));
            ok();
            break;
          case "start":
            int i = node(words);
            if (procs[i] != null && procs[i].isAlive()) throw new IllegalStateException("node " + i + " is running");
            spawnNode(i);
            awaitNode(i);
            ok();
            break;
          case "restart":
            stopNodes();
            zk.shutdown();
            startZk(false);
            startNodes();
            ok();
            break;
          default:
            throw new IllegalArgumentException("unknown command: " + line);
        }
      } catch (Exception e) {
        e.printStackTrace();
        protocol.println("{\"ok\": false, \"error\": " + quote(String.valueOf(e)) + "}");
      }
    }
    // end of stdin: whoever started us is gone
    killAll();
    Runtime.getRuntime().halt(0);
  }

  /** A command done: the answer says which node JVMs run now (their process ids, or null). */
  private void ok() {
    protocol.println("{\"ok\": true, \"pids\": " + pids() + "}");
  }

  private String pids() {
    StringBuilder out = new StringBuilder("[");
    for (int i = 0; i < count; i++) {
      Process p = procs[i];
      out.append(i == 0 ? "" : ", ").append(p != null && p.isAlive() ? String.valueOf(p.pid()) : "null");
    }
    return out.append("]").toString();
  }

  private int node(String[] words) {
    int i = Integer.parseInt(words[1]);
    if (i < 0 || i >= count) throw new IllegalArgumentException("no node " + i);
    return i;
  }

  /** Every node at once (the two cores start them side by side), then each in live_nodes. */
  private void startNodes() throws Exception {
    for (int i = 0; i < count; i++) spawnNode(i);
    for (int i = 0; i < count; i++) awaitNode(i);
  }

  private void spawnNode(int i) throws IOException {
    List<String> cmd = new ArrayList<>(List.of(javaBinary, "-Xmx" + nodeHeap, "-Xss512k",
        // small heaps on few cores: the serial collector has the smallest footprint
        "-XX:+UseSerialGC", "-Djava.awt.headless=true",
        "-Dsolr.zkclienttimeout=" + sessionTimeoutMs,
        // Solr's start-up says at level error when it is not set; nothing is written there
        "-Dsolr.log.dir=" + base.resolve("logs"),
        // the same throwaway key the test framework uses instead of one made at start-up
        "-DpkiHandlerPrivateKeyPath=" + resource("cryptokeys/priv_key512_pkcs8.pem"),
        "-DpkiHandlerPublicKeyPath=" + resource("cryptokeys/pub_key512.der")));
    cmd.addAll(List.of("-cp", classpath, "SolrCloudLauncher", "node",
        "--home", base.resolve("node" + i).toString(), "--port", String.valueOf(ports[i]),
        "--zk", zkHost()));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT);
    Process p = pb.start();
    procs[i] = p;
    stdins[i] = new OutputStreamWriter(p.getOutputStream(), StandardCharsets.UTF_8);
    stdouts[i] = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
  }

  private static String resource(String name) {
    URL url = SolrCloudLauncher.class.getClassLoader().getResource(name);
    return url == null ? "" : url.toExternalForm();
  }

  private void awaitNode(int i) throws Exception {
    String line = stdouts[i].readLine();
    if (line == null) {
      int code = procs[i].waitFor();
      throw new IllegalStateException("node " + i + " exited (" + code + ") before it started");
    }
    int port = Integer.parseInt(line.replaceAll("[^0-9]", ""));
    ports[i] = port;
    String name = "127.0.0.1:" + port + "_solr";
    SolrZkClient client = zk.getZkClient();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    while (!client.getChildren("/live_nodes", null, true).contains(name)) {
      if (System.nanoTime() > deadline) throw new IllegalStateException(name + " not in live_nodes");
      Thread.sleep(50);
    }
  }

  private void killNode(int i) throws InterruptedException {
    Process p = procs[i];
    if (p == null || !p.isAlive()) throw new IllegalStateException("node " + i + " is not running");
    p.destroyForcibly().waitFor(); // SIGKILL
    procs[i] = null;
  }

  private void stopNode(int i) throws Exception {
    Process p = procs[i];
    if (p == null || !p.isAlive()) throw new IllegalStateException("node " + i + " is not running");
    stdins[i].write("stop\n");
    stdins[i].flush();
    if (!p.waitFor(60, TimeUnit.SECONDS)) p.destroyForcibly().waitFor();
    procs[i] = null;
  }

  /** Every running node shut down cleanly, side by side. */
  private void stopNodes() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(count);
    List<Future<?>> done = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      if (procs[i] == null || !procs[i].isAlive()) continue;
      int n = i;
      done.add(pool.submit(() -> { stopNode(n); return null; }));
    }
    for (Future<?> f : done) f.get();
    pool.shutdown();
  }

  private void stopAll() throws Exception {
    try {
      stopNodes();
    } finally {
      zk.shutdown();
    }
  }

  private void killAll() {
    for (Process p : procs) {
      if (p != null && p.isAlive()) p.destroyForcibly();
    }
  }
}
