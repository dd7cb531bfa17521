import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.AdvancedScanResultConsumer;
import org.apache.hadoop.hbase.client.AsyncConnection;
import org.apache.hadoop.hbase.client.AsyncTable;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * The workloads of tools/bench/hbase-client.js, sent by HBase's own Java client (AsyncConnection, one
 * connection per server, calls multiplexed on it as beacon's client does), so the bench can
 * compare what each client costs the HBase server. Reaches HBase the way beacon's client does:
 * through the RPC bootstrap registry (--bootstrap host:port,...), no ZooKeeper.
 *
 * Workloads (each prints one JSON line with ops, elapsed and latencies):
 *   sequentialGets N, concurrentGets N (--concurrency in flight), multiGets N (rows; multi-gets of
 *   --multi-get rows, --concurrency / --multi-get of them in flight), sequentialPuts N,
 *   batchedLogPuts N (access-log-shaped entries in multi-puts of --batch, --inflight in flight),
 *   warmup SECONDS (gets, multi-gets and log multi-puts in turn, as the Node bench warms up).
 *
 * serve: reads "WORKLOAD COUNT" lines from stdin and answers each with one JSON line on stdout
 *   (an error: {"error": "..."}), until stdin ends; one warmed JVM and connection for many runs.
 * WORKLOAD --count N: runs it once and exits.
 * Options (all required): --bootstrap --config-table --config-family --log-table --log-family
 *   --rows --concurrency --multi-get --batch --inflight --buckets
 */
public final class BeaconHBaseLoad {
  // The qualifiers tools/bench/hbase-client.js writes.
  private static final byte[] CONFIG_QUALIFIER = Bytes.toBytes("json");
  private static final byte[] LOG_QUALIFIER = Bytes.toBytes("e");

  private final AsyncTable<AdvancedScanResultConsumer> config;
  private final AsyncTable<AdvancedScanResultConsumer> log;
  private final byte[] configFamily;
  private final byte[] logFamily;
  private final int rows;
  private final int concurrency;
  private final int multiGet;
  private final int batch;
  private final int inflight;
  private final int buckets;

  private BeaconHBaseLoad(AsyncConnection conn, Map<String, List<String>> args) {
    config = conn.getTable(TableName.valueOf(BeaconHBaseTool.one(args, "--config-table")));
    log = conn.getTable(TableName.valueOf(BeaconHBaseTool.one(args, "--log-table")));
    configFamily = Bytes.toBytes(BeaconHBaseTool.one(args, "--config-family"));
    logFamily = Bytes.toBytes(BeaconHBaseTool.one(args, "--log-family"));
    rows = intArg(args, "--rows");
    concurrency = intArg(args, "--concurrency");
    multiGet = intArg(args, "--multi-get");
    batch = intArg(args, "--batch");
    inflight = intArg(args, "--inflight");
    buckets = intArg(args, "--buckets");
  }

  public static void main(String[] argv) throws Exception {
    if (argv.length == 0) throw new IllegalArgumentException("usage: serve|WORKLOAD --option value...");
    Map<String, List<String>> args = BeaconHBaseTool.parseArgs(argv);
    Configuration conf = HBaseConfiguration.create();
    conf.set("hbase.client.registry.impl", "org.apache.hadoop.hbase.client.RpcConnectionRegistry");
    conf.set("hbase.client.bootstrap.servers", BeaconHBaseTool.one(args, "--bootstrap"));
    try (AsyncConnection conn = ConnectionFactory.createAsyncConnection(conf).get(60, TimeUnit.SECONDS)) {
      BeaconHBaseLoad load = new BeaconHBaseLoad(conn, args);
      if (!argv[0].equals("serve")) {
        System.out.println(load.run(argv[0], intArg(args, "--count")));
        return;
      }
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      System.out.println("{\"ready\":true,\"pid\":" + ProcessHandle.current().pid() + "}");
      for (String line; (line = in.readLine()) != null; ) {
        if (line.isBlank()) continue;
        String[] words = line.trim().split("\\s+");
        String answer;
        try {
          answer = load.run(words[0], Integer.parseInt(words[1]));
        } catch (Exception e) {
          Throwable cause = e.getCause() != null ? e.getCause() : e;
          answer = "{\"error\":" + BeaconHBaseTool.jsonString(cause.toString()) + "}";
        }
        System.out.println(answer);
      }
    }
  }

  private String run(String workload, int count) throws Exception {
    return switch (workload) {
      case "sequentialGets" -> gets(count, 1);
      case "concurrentGets" -> gets(count, concurrency);
      case "multiGets" -> multiGets(count);
      case "sequentialPuts" -> sequentialPuts(count);
      case "batchedLogPuts" -> batchedLogPuts(count);
      case "warmup" -> warmUp(count);
      default -> throw new IllegalArgumentException("unknown workload " + workload);
    };
  }

  private byte[] configRow(int i) {
    return Bytes.toBytes(String.valueOf(1 + (i % rows)));
  }

  private String gets(int n, int inFlight) throws Exception {
    long[] lat = new long[n];
    long started = System.nanoTime();
    drive(n, 1, inFlight, lat, (from, size, worker) -> config.get(new Get(configRow(from))).thenAccept((r) -> {
      if (r.isEmpty()) throw new IllegalStateException("seeded row " + (1 + (from % rows)) + " missing");
    }));
    return summary(n, lat, System.nanoTime() - started, "");
  }

  // As the config source reads: the ids of one event-loop turn in one multi-get.
  private String multiGets(int n) throws Exception {
    int calls = (n + multiGet - 1) / multiGet;
    long[] lat = new long[calls];
    long started = System.nanoTime();
    drive(n, multiGet, Math.max(1, concurrency / multiGet), lat, (from, size, worker) -> {
      List<Get> gets = new ArrayList<>(size);
      for (int j = 0; j < size; j++) gets.add(new Get(configRow(from + j)));
      return config.getAll(gets).thenAccept((results) -> {
        for (Result r : results) if (r.isEmpty()) throw new IllegalStateException("multi-get row missing");
      });
    });
    return summary(n, lat, System.nanoTime() - started, ",\"size\":" + multiGet);
  }

  private String sequentialPuts(int n) throws Exception {
    long[] lat = new long[n];
    long started = System.nanoTime();
    drive(n, 1, 1, lat, (from, size, worker) -> config.put(new Put(Bytes.toBytes("put-" + (from % 1000)))
        .addColumn(configFamily, CONFIG_QUALIFIER, Bytes.toBytes("{\"i\":" + from + "}"))));
    return summary(n, lat, System.nanoTime() - started, "");
  }

  // Access-log-shaped entries under access-log row keys (bucket, 13-digit ms, writer-seq).
  private String batchedLogPuts(int n) throws Exception {
    int calls = (n + batch - 1) / batch;
    long[] lat = new long[calls];
    AtomicInteger failed = new AtomicInteger();
    long started = System.nanoTime();
    drive(n, batch, inflight, lat, (from, size, worker) -> {
      List<Put> puts = new ArrayList<>(size);
      for (int j = 0; j < size; j++) {
        int i = from + j;
        long now = System.currentTimeMillis();
        int bucket = i % buckets;
        String ts = String.valueOf(now);
        String key = (bucket < 16 ? "0" : "") + Integer.toHexString(bucket) + "0".repeat(Math.max(0, 13 - ts.length())) + ts + "j" + worker + "-" + i;
        String entry = "{\"ts\":" + now + ",\"endpoint\":\"sample5\",\"id\":\"" + (1 + (i % 10000))
            + "\",\"status\":200,\"ms\":0.31,\"ip\":\"127.0.0.1\",\"ua\":\"tools/bench/1.0\",\"ref\":\"http://example.test/page\"}";
        puts.add(new Put(Bytes.toBytes(key)).addColumn(logFamily, LOG_QUALIFIER, Bytes.toBytes(entry)));
      }
      List<CompletableFuture<Void>> each = log.put(puts);
      return CompletableFuture.allOf(each.toArray(new CompletableFuture<?>[0])).handle((v, err) -> {
        for (CompletableFuture<Void> f : each) if (f.isCompletedExceptionally()) failed.incrementAndGet();
        return null;
      });
    });
    double seconds = (System.nanoTime() - started) / 1e9;
    Arrays.sort(lat);
    return "{\"entries\":" + n + ",\"batch\":" + batch + ",\"inflightBatches\":" + inflight
        + ",\"entriesPerSec\":" + Math.round(n / seconds) + ",\"batchP50Ms\":" + ms(percentile(lat, 50))
        + ",\"batchP99Ms\":" + ms(percentile(lat, 99)) + ",\"failed\":" + failed.get()
        + ",\"elapsedMs\":" + ms(System.nanoTime() - started) + "}";
  }

  // Every path measured, in turn, so the client's JIT has compiled them before the first round.
  private String warmUp(int seconds) throws Exception {
    long until = System.nanoTime() + seconds * 1_000_000_000L;
    int rounds = 0;
    while (System.nanoTime() < until) {
      gets(20, 20);
      multiGets(200);
      batchedLogPuts(2000);
      rounds++;
    }
    return "{\"warmupRounds\":" + rounds + "}";
  }

  @FunctionalInterface
  private interface Call {
    CompletableFuture<?> start(int from, int size, int worker);
  }

  /**
   * `n` ops in calls of `unit` ops, `inFlight` calls at a time, each worker starting its next call
   * when its last one completes (in the completing RPC thread: starting a call does not block).
   * Records each call's latency in ns into `lat`; fails with the first call's error.
   */
  private static void drive(int n, int unit, int inFlight, long[] lat, Call call) throws Exception {
    AtomicInteger next = new AtomicInteger();
    AtomicInteger active = new AtomicInteger(inFlight);
    CompletableFuture<Void> done = new CompletableFuture<>();
    for (int w = 0; w < inFlight; w++) launch(n, unit, w, next, active, done, lat, call);
    done.get();
  }

  private static void launch(int n, int unit, int worker, AtomicInteger next, AtomicInteger active,
      CompletableFuture<Void> done, long[] lat, Call call) {
    int index = next.getAndIncrement();
    int from = index * unit;
    if (from >= n || done.isDone()) {
      if (active.decrementAndGet() == 0) done.complete(null);
      return;
    }
    long t = System.nanoTime();
    CompletableFuture<?> f;
    try {
      f = call.start(from, Math.min(unit, n - from), worker);
    } catch (RuntimeException e) {
      done.completeExceptionally(e);
      return;
    }
    f.whenComplete((r, err) -> {
      lat[index] = System.nanoTime() - t;
      if (err != null) done.completeExceptionally(err);
      else launch(n, unit, worker, next, active, done, lat, call);
    });
  }

  private static String summary(int ops, long[] lat, long elapsedNs, String extra) {
    Arrays.sort(lat);
    return "{\"ops\":" + ops + ",\"opsPerSec\":" + Math.round(ops / (elapsedNs / 1e9))
        + ",\"p50Ms\":" + ms(percentile(lat, 50)) + ",\"p99Ms\":" + ms(percentile(lat, 99))
        + ",\"maxMs\":" + ms(lat[lat.length - 1]) + ",\"elapsedMs\":" + ms(elapsedNs) + extra + "}";
  }

  // Nearest rank, as tools/bench/lib/machine.js's percentile().
  private static long percentile(long[] sorted, int p) {
    int rank = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
    return sorted[Math.min(sorted.length - 1, Math.max(0, rank))];
  }

  private static String ms(long ns) {
    return String.format(Locale.ROOT, "%.3f", ns / 1e6);
  }

  private static int intArg(Map<String, List<String>> args, String name) {
    return Integer.parseInt(BeaconHBaseTool.one(args, name));
  }
}
