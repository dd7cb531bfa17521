import java.io.IOException;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.RegionMetrics;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.CompactionState;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;

/**
 * What a table's store files go through, one JVM run each, printing a one-line JSON summary
 * (tools/bench/log-bytes.js measures the RegionServer's CPU around each step):
 *
 * flush: writes every memstore of the table to HFiles; returns when done.
 * compact: asks for a major compaction of every region and waits until each region has been
 *   major-compacted since the request, holds at most one file per store and none compacts.
 * reopen: disables and enables the table. A store archives the files a compaction replaced
 *   when it closes (otherwise a chore does it minutes later), and the block cache holds none of
 *   the table's blocks afterwards.
 * Arguments: --table T --timeout-ms N
 */
public final class BeaconHBaseStore {
  private BeaconHBaseStore() {}

  public static void main(String[] argv) throws Exception {
    if (argv.length == 0) throw new IllegalArgumentException("usage: flush|compact|reopen --table T --timeout-ms N");
    Map<String, List<String>> args = BeaconHBaseTool.parseArgs(argv);
    TableName table = TableName.valueOf(BeaconHBaseTool.one(args, "--table"));
    long started = System.nanoTime();
    long deadline = started + Long.parseLong(BeaconHBaseTool.one(args, "--timeout-ms")) * 1_000_000L;
    Configuration conf = BeaconHBaseTool.clientConf();
    // A major compaction of a large table, or a flush of a full memstore, outlasts the tool's
    // usual per-call limits.
    conf.setInt("hbase.rpc.timeout", 600_000);
    conf.setInt("hbase.client.operation.timeout", 1_200_000);
    try (Connection conn = ConnectionFactory.createConnection(conf); Admin admin = conn.getAdmin()) {
      String extra = switch (argv[0]) {
        case "flush" -> {
          admin.flush(table);
          yield "";
        }
        case "compact" -> compact(admin, table, deadline);
        case "reopen" -> {
          admin.disableTable(table);
          admin.enableTable(table);
          yield "";
        }
        default -> throw new IllegalArgumentException("unknown command " + argv[0]);
      };
      System.out.println("{\"" + argv[0] + "Ms\":" + (System.nanoTime() - started) / 1_000_000L + extra + "}");
    }
  }

  /** @return the summary's extra fields: regions and the store files left */
  private static String compact(Admin admin, TableName table, long deadline) throws Exception {
    // Region servers stamp a major compaction with their wall clock: the request's time, less a
    // second of slack for the stamp's resolution.
    long requested = System.currentTimeMillis() - 1000;
    admin.majorCompact(table);
    int[] last = {0, 0};
    BeaconHBaseTool.await(deadline, "major compaction of " + table, () -> {
      if (admin.getCompactionState(table) != CompactionState.NONE) throw new IOException("still compacting");
      int regions = 0;
      int files = 0;
      for (ServerName server : admin.getRegionServers()) {
        for (RegionMetrics region : admin.getRegionMetrics(server, table)) {
          regions++;
          files += region.getStoreFileCount();
          if (region.getStoreFileCount() == 0) continue; // an empty region has nothing to compact
          if (region.getLastMajorCompactionTimestamp() < requested) {
            throw new IOException(region.getNameAsString() + " not major-compacted yet");
          }
          if (region.getStoreFileCount() > region.getStoreCount()) {
            throw new IOException(region.getNameAsString() + " still has " + region.getStoreFileCount() + " files");
          }
        }
      }
      last[0] = regions;
      last[1] = files;
    });
    return ",\"regions\":" + last[0] + ",\"storeFiles\":" + last[1];
  }
}
