import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.ClusterMetrics;
import org.apache.hadoop.hbase.ClusterMetrics.Option;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * Read-only views of a running HBase through HBase's own Java client (ZooKeeper bootstrap), so
 * that tests and status commands do not have to trust beacon's client to check beacon's client.
 * One JVM run each; the last stdout line is a JSON summary.
 *
 * cluster --timeout-ms N: the active and backup masters, every live RegionServer with the regions
 *   it holds (per table, and whether it holds hbase:meta), dead servers, regions in transition.
 * dump --timeout-ms N --table T --family F --qualifier Q --out FILE: writes one
 *   "rowkey TAB value" line per row of the table (a full scan) to FILE; summary {"rows": n}.
 */
public final class BeaconHBaseInspect {
  public static void main(String[] argv) throws Exception {
    if (argv.length == 0) throw new IllegalArgumentException("usage: cluster|dump --option value...");
    Map<String, List<String>> args = BeaconHBaseTool.parseArgs(argv);
    long deadline = System.nanoTime() + Long.parseLong(BeaconHBaseTool.one(args, "--timeout-ms")) * 1_000_000L;
    Configuration conf = BeaconHBaseTool.clientConf();
    try (Connection conn = ConnectionFactory.createConnection(conf)) {
      switch (argv[0]) {
        case "cluster" -> cluster(conn, deadline);
        case "dump" -> dump(conn, args, deadline);
        default -> throw new IllegalArgumentException("unknown command " + argv[0]);
      }
    }
  }

  private static void cluster(Connection conn, long deadline) throws Exception {
    StringBuilder out = new StringBuilder();
    try (Admin admin = conn.getAdmin()) {
      BeaconHBaseTool.await(deadline, "cluster metrics from the master", () -> {
        out.setLength(0);
        ClusterMetrics metrics = admin.getClusterMetrics(EnumSet.of(Option.MASTER, Option.BACKUP_MASTERS,
            Option.LIVE_SERVERS, Option.DEAD_SERVERS, Option.REGIONS_IN_TRANSITION));
        List<String> live = new ArrayList<>();
        for (ServerName server : metrics.getLiveServerMetrics().keySet()) live.add(serverJson(admin, server));
        List<String> backups = new ArrayList<>();
        for (ServerName server : metrics.getBackupMasterNames()) backups.add(server.getAddress().toString());
        List<String> dead = new ArrayList<>();
        for (ServerName server : metrics.getDeadServerNames()) dead.add(server.toString());
        out.append("{\"active\":").append(BeaconHBaseTool.jsonString(metrics.getMasterName().getAddress().toString()))
            .append(",\"backups\":").append(BeaconHBaseTool.jsonList(backups))
            .append(",\"live\":[").append(String.join(",", live)).append(']')
            .append(",\"dead\":").append(BeaconHBaseTool.jsonList(dead))
            .append(",\"inTransition\":").append(metrics.getRegionStatesInTransition().size())
            .append('}');
      });
    }
    System.out.println(out);
  }

  /** Asks the RegionServer itself which regions it has online (not the master's last report). */
  private static String serverJson(Admin admin, ServerName server) throws IOException {
    Map<String, Integer> tables = new TreeMap<>();
    boolean meta = false;
    int regions = 0;
    for (RegionInfo region : admin.getRegions(server)) {
      regions++;
      if (region.getTable().equals(TableName.META_TABLE_NAME)) meta = true;
      tables.merge(region.getTable().getNameAsString(), 1, Integer::sum);
    }
    return "{\"server\":" + BeaconHBaseTool.jsonString(server.getAddress().toString())
        + ",\"startCode\":" + server.getStartcode()
        + ",\"regions\":" + regions
        + ",\"meta\":" + meta
        + ",\"tables\":" + BeaconHBaseTool.jsonCounts(tables) + "}";
  }

  private static void dump(Connection conn, Map<String, List<String>> args, long deadline) throws Exception {
    TableName name = TableName.valueOf(BeaconHBaseTool.one(args, "--table"));
    byte[] family = Bytes.toBytes(BeaconHBaseTool.one(args, "--family"));
    byte[] qualifier = Bytes.toBytes(BeaconHBaseTool.one(args, "--qualifier"));
    long[] rows = {0};
    BeaconHBaseTool.await(deadline, "a full scan of " + name, () -> {
      rows[0] = 0;
      try (Table table = conn.getTable(name);
          ResultScanner scanner = table.getScanner(new Scan().addColumn(family, qualifier).setCaching(1000));
          BufferedWriter out = Files.newBufferedWriter(Paths.get(BeaconHBaseTool.one(args, "--out")), StandardCharsets.UTF_8)) {
        for (Result result : scanner) {
          byte[] value = result.getValue(family, qualifier);
          out.write(Bytes.toStringBinary(result.getRow()));
          out.write('\t');
          out.write(value == null ? "" : Bytes.toString(value));
          out.write('\n');
          rows[0]++;
        }
      }
    });
    System.out.println("{\"rows\":" + rows[0] + "}");
  }
}
