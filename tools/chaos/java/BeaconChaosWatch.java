import java.io.IOException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.ClusterMetrics;
import org.apache.hadoop.hbase.ClusterMetrics.Option;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.master.RegionState;

/**
 * The chaos run's observer: HBase's own Java client (ZooKeeper bootstrap, hbase-site.xml from the
 * classpath) asked every --interval-ms what the cluster looks like, one JSON line per look on
 * stdout, until stdin closes (the parent ended or died). Independent of beacon's client.
 *
 * A line: {"at":epochMs,"ms":tookMs,"active":"host:port","backups":[..],"dead":[..],"rit":n,
 *   "ritRegions":[names],"ritStates":[{"region":name,"state":"OPENING",..,"server":"host:port"|null}],
 *   "servers":[{"server":"host:port","startCode":n,"regions":[names]}
 *   | {"server":..,"startCode":n,"unreachable":"why"}]}
 * or {"at":epochMs,"ms":tookMs,"error":"why"} while the master does not answer (failover).
 * Regions are listed as the RegionServer itself reports them online (not the master's last report).
 */
public final class BeaconChaosWatch {
  public static void main(String[] argv) throws Exception {
    long interval = Long.parseLong(BeaconHBaseTool.one(BeaconHBaseTool.parseArgs(argv), "--interval-ms"));
    Thread stdin = new Thread(() -> {
      try {
        while (System.in.read() != -1) {
          // nothing is sent; EOF means the parent is gone
        }
      } catch (IOException e) {
        // same as EOF
      }
      System.exit(0);
    });
    stdin.setDaemon(true);
    stdin.start();

    Configuration conf = BeaconHBaseTool.clientConf();
    // One look must not hang on a dead server or a missing master: fail it fast, look again.
    conf.setInt("hbase.client.retries.number", 1);
    conf.setInt("hbase.rpc.timeout", 2000);
    conf.setInt("hbase.client.operation.timeout", 3000);
    conf.setInt("hbase.client.pause", 100);
    try (Connection conn = ConnectionFactory.createConnection(conf)) {
      while (true) {
        long at = System.currentTimeMillis();
        String line;
        try (Admin admin = conn.getAdmin()) {
          line = look(admin, at);
        } catch (Exception e) {
          line = "{\"at\":" + at + ",\"ms\":" + (System.currentTimeMillis() - at) + ",\"error\":" + BeaconHBaseTool.jsonString(String.valueOf(e).split("\n")[0]) + "}";
        }
        System.out.println(line);
        System.out.flush();
        long wait = at + interval - System.currentTimeMillis();
        if (wait > 0) Thread.sleep(wait);
      }
    }
  }

  private static String look(Admin admin, long at) throws IOException {
    ClusterMetrics metrics = admin.getClusterMetrics(EnumSet.of(Option.MASTER, Option.BACKUP_MASTERS,
        Option.LIVE_SERVERS, Option.DEAD_SERVERS, Option.REGIONS_IN_TRANSITION));
    List<String> servers = new ArrayList<>();
    for (ServerName server : metrics.getLiveServerMetrics().keySet()) servers.add(serverJson(admin, server));
    List<String> backups = new ArrayList<>();
    for (ServerName server : metrics.getBackupMasterNames()) backups.add(server.getAddress().toString());
    List<String> dead = new ArrayList<>();
    for (ServerName server : metrics.getDeadServerNames()) dead.add(server.toString());
    List<String> rit = new ArrayList<>();
    List<String> ritStates = new ArrayList<>();
    for (RegionState state : metrics.getRegionStatesInTransition()) {
      rit.add(state.getRegion().getRegionNameAsString());
      ServerName on = state.getServerName();
      ritStates.add("{\"region\":" + BeaconHBaseTool.jsonString(state.getRegion().getRegionNameAsString())
          + ",\"state\":" + BeaconHBaseTool.jsonString(state.getState().name())
          + ",\"server\":" + (on == null ? "null" : BeaconHBaseTool.jsonString(on.getAddress().toString())) + "}");
    }
    return "{\"at\":" + at + ",\"ms\":" + (System.currentTimeMillis() - at)
        + ",\"active\":" + BeaconHBaseTool.jsonString(metrics.getMasterName().getAddress().toString())
        + ",\"backups\":" + BeaconHBaseTool.jsonList(backups)
        + ",\"dead\":" + BeaconHBaseTool.jsonList(dead)
        + ",\"rit\":" + rit.size()
        + ",\"ritRegions\":" + BeaconHBaseTool.jsonList(rit)
        + ",\"ritStates\":[" + String.join(",", ritStates) + "]"
        + ",\"servers\":[" + String.join(",", servers) + "]}";
  }

  private static String serverJson(Admin admin, ServerName server) {
    String head = "{\"server\":" + BeaconHBaseTool.jsonString(server.getAddress().toString()) + ",\"startCode\":" + server.getStartcode();
    try {
      List<String> regions = new ArrayList<>();
      for (RegionInfo region : admin.getRegions(server)) regions.add(region.getRegionNameAsString());
      return head + ",\"regions\":" + BeaconHBaseTool.jsonList(regions) + "}";
    } catch (IOException e) {
      return head + ",\"unreachable\":" + BeaconHBaseTool.jsonString(String.valueOf(e).split("\n")[0]) + "}";
    }
  }
}
