import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.HConstants;
import org.apache.hadoop.hbase.HRegionLocation;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.TableNotFoundException;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.BufferedMutator;
import org.apache.hadoop.hbase.client.BufferedMutatorParams;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.RegionLocator;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * Admin tasks against the standalone HBase, one JVM run each, printing a one-line JSON summary.
 *
 * setup: waits until a freshly (re)started HBase really serves (in a cluster: until
 *   --expect-servers RegionServers have reported in), creates the beacon tables if absent, seeds
 *   the config table from stdin, and in a cluster waits until every RegionServer holds regions of
 *   the access-log table (asking the balancer if one holds none). Arguments (all required but the
 *   repeating --split and --config-split, and --expect-servers): --timeout-ms N --config-table T
 *   --config-family F --config-qualifier Q --seed-check-row R --probe-row R --log-table T [--rollup-table T --rollup-family F]
 *   --log-family F [--split KEY]... [--config-split KEY]... [--expect-servers N] [--log-ttl SECONDS] [--rollup-ttl SECONDS]
 *   [--log-attr NAME=VALUE]... [--rollup-attr NAME=VALUE]... (a TTL and family attributes such as
 *   COMPRESSION only for a table it creates: absent, HBase keeps cells forever, unencoded and uncompressed)
 *   stdin: one "rowkey TAB value" line per config row; read only when the seed is missing.
 * shutdown: asks the master for an orderly cluster shutdown. Arguments: --timeout-ms N
 */
public final class BeaconHBaseTool {
  private static final long POLL_MS = 500;

  public static void main(String[] argv) throws Exception {
    if (argv.length == 0) throw new IllegalArgumentException("usage: setup|shutdown --option value...");
    Map<String, List<String>> args = parseArgs(argv);
    long started = System.nanoTime();
    long deadline = started + Long.parseLong(one(args, "--timeout-ms")) * 1_000_000L;
    Configuration conf = clientConf();
    switch (argv[0]) {
      case "setup" -> setup(conf, args, started, deadline);
      case "shutdown" -> shutdown(conf, deadline);
      default -> throw new IllegalArgumentException("unknown command " + argv[0]);
    }
  }

  /** HBase's own client configuration (hbase-site.xml from the classpath), failing each attempt fast. */
  static Configuration clientConf() {
    Configuration conf = HBaseConfiguration.create();
    // The callers' loops own the overall deadline.
    conf.setInt("hbase.client.retries.number", 5);
    conf.setInt("hbase.client.pause", 100);
    conf.setInt("hbase.rpc.timeout", 10_000);
    conf.setInt("hbase.client.operation.timeout", 20_000);
    conf.setInt("zookeeper.recovery.retry", 1);
    return conf;
  }

  /**
   * Stopping the cluster through the master closes every region before the RegionServer exits.
   * A SIGTERM instead races the master's and the RegionServer's shutdown hooks: the master may
   * record a crashed RegionServer (slower next start) or stop ZooKeeper under it (slow exit).
   */
  private static void shutdown(Configuration conf, long deadline) throws Exception {
    try (Connection conn = ConnectionFactory.createConnection(conf); Admin admin = conn.getAdmin()) {
      await(deadline, "master to accept shutdown", admin::shutdown);
    }
    System.out.println("{\"shutdown\":true}");
  }

  private static void setup(Configuration conf, Map<String, List<String>> args, long started, long deadline)
      throws Exception {
    TableName configTable = TableName.valueOf(one(args, "--config-table"));
    byte[] configFamily = Bytes.toBytes(one(args, "--config-family"));
    byte[] configQualifier = Bytes.toBytes(one(args, "--config-qualifier"));
    TableName logTable = TableName.valueOf(one(args, "--log-table"));
    byte[] logFamily = Bytes.toBytes(one(args, "--log-family"));
    List<String> rollupArg = args.getOrDefault("--rollup-table", List.of());
    TableName rollupTable = rollupArg.isEmpty() ? null : TableName.valueOf(rollupArg.get(0));
    byte[] rollupFamily = Bytes.toBytes(args.getOrDefault("--rollup-family", List.of("r")).get(0));
    List<String> splits = args.getOrDefault("--split", List.of());
    List<String> configSplits = args.getOrDefault("--config-split", List.of());
    int expectServers = Integer.parseInt(args.getOrDefault("--expect-servers", List.of("1")).get(0));
    int logTtl = ttlArg(args, "--log-ttl");
    int rollupTtl = ttlArg(args, "--rollup-ttl");
    Map<String, String> logAttrs = attrArgs(args, "--log-attr");
    Map<String, String> rollupAttrs = attrArgs(args, "--rollup-attr");

    try (Connection conn = ConnectionFactory.createConnection(conf); Admin admin = conn.getAdmin()) {
      List<String> created = new ArrayList<>();
      await(deadline, expectServers + " RegionServer(s) reported in", () -> {
        int live = admin.getRegionServers().size();
        if (live < expectServers) throw new IOException(live + " of " + expectServers + " live");
      });
      // getDescriptor goes through the master and fails until it is initialized.
      await(deadline, "master initialized and tables present", () -> {
        if (ensureTable(admin, configTable, configFamily, configSplits, HConstants.FOREVER, Map.of())) {
          created.add(configTable.getNameAsString());
        }
        if (ensureTable(admin, logTable, logFamily, splits, logTtl, logAttrs)) created.add(logTable.getNameAsString());
        if (rollupTable != null && ensureTable(admin, rollupTable, rollupFamily, List.of(), rollupTtl, rollupAttrs)) {
          created.add(rollupTable.getNameAsString());
        }
      });
      // After a crash the master is up before WAL recovery reopens the user regions: read every region.
      Map<String, Integer> regions = new HashMap<>();
      await(deadline, "every region serving reads", () -> {
        regions.put(configTable.getNameAsString(), probeRegions(conn, configTable));
        regions.put(logTable.getNameAsString(), probeRegions(conn, logTable));
        if (rollupTable != null) regions.put(rollupTable.getNameAsString(), probeRegions(conn, rollupTable));
      });
      long readyMs = (System.nanoTime() - started) / 1_000_000L;
      Map<String, Integer> spread = expectServers > 1 ? awaitSpread(admin, logTable, deadline) : Map.of();

      int seeded = 0;
      try (Table table = conn.getTable(configTable)) {
        byte[] checkRow = Bytes.toBytes(one(args, "--seed-check-row"));
        if (!table.exists(new Get(checkRow).addColumn(configFamily, configQualifier))) {
          seeded = seed(conn, table, configFamily, configQualifier, checkRow);
          // Standalone HBase writes its WAL to the local file system without hflush, so a SIGKILL can
          // lose edits still in the memstore; a flush puts the seed into HFiles.
          admin.flush(configTable);
        }
        Result probe = table.get(new Get(Bytes.toBytes(one(args, "--probe-row"))));
        byte[] value = probe.getValue(configFamily, configQualifier);
        System.out.println("{\"readyMs\":" + readyMs
            + ",\"totalMs\":" + (System.nanoTime() - started) / 1_000_000L
            + ",\"created\":" + jsonList(created)
            + ",\"regions\":{\"" + configTable + "\":" + regions.get(configTable.getNameAsString())
            + ",\"" + logTable + "\":" + regions.get(logTable.getNameAsString()) + "}"
            + ",\"seeded\":" + seeded
            + ",\"spread\":" + jsonCounts(spread)
            + ",\"probe\":" + (value == null ? "null" : jsonString(Bytes.toString(value))) + "}");
      }
    }
  }

  /** A TTL argument in seconds; absent: HBase's FOREVER. */
  private static int ttlArg(Map<String, List<String>> args, String name) {
    List<String> value = args.getOrDefault(name, List.of());
    return value.isEmpty() ? HConstants.FOREVER : Integer.parseInt(value.get(0));
  }

  /** Family attributes given as repeated NAME=VALUE arguments, by name. */
  private static Map<String, String> attrArgs(Map<String, List<String>> args, String name) {
    Map<String, String> attrs = new TreeMap<>();
    for (String pair : args.getOrDefault(name, List.of())) {
      int eq = pair.indexOf('=');
      if (eq <= 0) throw new IllegalArgumentException(name + " needs NAME=VALUE, got " + pair);
      attrs.put(pair.substring(0, eq), pair.substring(eq + 1));
    }
    return attrs;
  }

  /**
   * Creates the table unless it exists, its family with this TTL (seconds) and attributes
   * (DATA_BLOCK_ENCODING, COMPRESSION…); never alters or drops an existing one (`beacon log
   * retention --set` changes a TTL; docs/access-log.md says how to change the others).
   */
  private static boolean ensureTable(Admin admin, TableName name, byte[] family, List<String> splits, int ttl,
      Map<String, String> attrs) throws IOException {
    try {
      admin.getDescriptor(name);
      return false;
    } catch (TableNotFoundException e) {
      ColumnFamilyDescriptorBuilder cf = ColumnFamilyDescriptorBuilder.newBuilder(family).setTimeToLive(ttl);
      attrs.forEach(cf::setValue);
      TableDescriptorBuilder desc = TableDescriptorBuilder.newBuilder(name).setColumnFamily(cf.build());
      byte[][] keys = splits.stream().map(Bytes::toBytes).toArray(byte[][]::new);
      if (keys.length == 0) admin.createTable(desc.build());
      else admin.createTable(desc.build(), keys);
      return true;
    }
  }

  /**
   * Regions of `table` per live RegionServer, once every live server holds at least one. A server
   * that holds none (say it joined after the table was created) gets some from the balancer.
   */
  private static Map<String, Integer> awaitSpread(Admin admin, TableName table, long deadline) throws Exception {
    Map<String, Integer> spread = new TreeMap<>();
    boolean[] askedBalancer = {false};
    await(deadline, "regions of " + table + " on every RegionServer", () -> {
      spread.clear();
      for (ServerName server : admin.getRegionServers()) {
        int n = 0;
        for (RegionInfo region : admin.getRegions(server)) if (region.getTable().equals(table)) n++;
        spread.put(server.getAddress().toString(), n);
      }
      if (spread.containsValue(0)) {
        if (!askedBalancer[0]) {
          admin.balancerSwitch(true, true);
          askedBalancer[0] = admin.balance();
        }
        throw new IOException("a RegionServer holds no region of " + table + ": " + spread);
      }
    });
    return spread;
  }

  private static int probeRegions(Connection conn, TableName name) throws IOException {
    try (RegionLocator locator = conn.getRegionLocator(name); Table table = conn.getTable(name)) {
      List<HRegionLocation> locations = locator.getAllRegionLocations();
      for (HRegionLocation loc : locations) {
        byte[] start = loc.getRegion().getStartKey();
        table.exists(new Get(start.length == 0 ? new byte[] {0} : start));
      }
      return locations.size();
    }
  }

  /**
   * Writes every stdin row but the check row through a BufferedMutator, then the check row alone:
   * it exists only if everything before it was flushed, which is what the next run tests.
   */
  private static int seed(Connection conn, Table table, byte[] family, byte[] qualifier, byte[] checkRow)
      throws IOException {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    int rows = 0;
    Put last = null;
    BufferedMutatorParams params = new BufferedMutatorParams(table.getName()).writeBufferSize(4 << 20);
    try (BufferedMutator mutator = conn.getBufferedMutator(params)) {
      for (String line; (line = in.readLine()) != null;) {
        int tab = line.indexOf('\t');
        if (tab <= 0) throw new IllegalArgumentException("seed line without rowkey<TAB>value: " + line);
        byte[] row = Bytes.toBytes(line.substring(0, tab));
        Put put = new Put(row).addColumn(family, qualifier, Bytes.toBytes(line.substring(tab + 1)));
        if (Bytes.equals(row, checkRow)) last = put;
        else mutator.mutate(put);
        rows++;
      }
      mutator.flush();
    }
    if (last == null) throw new IllegalArgumentException("stdin had no row " + Bytes.toString(checkRow));
    table.put(last);
    return rows;
  }

  interface Step {
    void run() throws Exception;
  }

  static void await(long deadline, String what, Step step) throws Exception {
    while (true) {
      try {
        step.run();
        return;
      } catch (Exception e) {
        if (System.nanoTime() > deadline) {
          throw new IOException("timed out waiting for " + what + "; last error: " + e, e);
        }
        Thread.sleep(POLL_MS);
      }
    }
  }

  static Map<String, List<String>> parseArgs(String[] argv) {
    Map<String, List<String>> args = new HashMap<>();
    for (int i = 1; i + 1 < argv.length; i += 2) {
      args.computeIfAbsent(argv[i], k -> new ArrayList<>()).add(argv[i + 1]);
    }
    return args;
  }

  static String one(Map<String, List<String>> args, String name) {
    List<String> values = args.get(name);
    if (values == null || values.size() != 1) throw new IllegalArgumentException("need exactly one " + name);
    return values.get(0);
  }

  static String jsonCounts(Map<String, Integer> counts) {
    StringBuilder sb = new StringBuilder("{");
    for (Map.Entry<String, Integer> e : counts.entrySet()) {
      sb.append(sb.length() > 1 ? "," : "").append(jsonString(e.getKey())).append(':').append(e.getValue());
    }
    return sb.append('}').toString();
  }

  static String jsonList(List<String> items) {
    StringBuilder sb = new StringBuilder("[");
    for (String item : items) sb.append(sb.length() > 1 ? "," : "").append(jsonString(item));
    return sb.append(']').toString();
  }

  static String jsonString(String s) {
    StringBuilder sb = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') sb.append('\\').append(c);
      else if (c < 0x20) sb.append(String.format("\\u%04x", (int) c));
      else sb.append(c);
    }
    return sb.append('"').toString();
  }
}
