'use strict'

/**
 * The HBase client's traffic counters (packages/hbase-client/lib/traffic.js) as Prometheus counters, read from
 * the client when /metrics is scraped: the client counts with plain additions, so the request
 * path pays nothing here. Kinds are the tags beacon's callers give their calls (the toggle
 * store's config reads and polls, the access log's batches, rollup marks and job, queries...).
 *
 * Each metric registers itself through prom-client's metric interface (name, help, type,
 * aggregator, get()), as hot.js does, so the cluster's /metrics sums the workers.
 */

/**
 * @typedef {import('@beacon/hbase-client').TrafficStats} TrafficStats
 * @typedef {{ labels: Record<string, string>, value: number }} Sample
 */

/**
 * The counters, each a name, a help and the samples it reads from one traffic snapshot.
 * @type {Array<{ name: string, help: string, read: (stats: TrafficStats) => Sample[] }>}
 */
const COUNTERS = [
  {
    name: 'beacon_hbase_rpcs_total',
    help: 'HBase RPCs sent (one request frame each, retries included), by kind (what beacon sent them for: config, ' +
      'log, rollup-mark, rollup, switches, changes, query, ...; meta and admin: the client\'s own) and method',
    read: (stats) => Object.entries(stats.kinds).flatMap(([kind, t]) =>
      Object.entries(t.calls).map(([method, n]) => ({ labels: { kind, method }, value: n })))
  },
  {
    name: 'beacon_hbase_request_bytes_total',
    help: 'Bytes of the HBase RPC request frames sent, length prefix included, by kind',
    read: (stats) => Object.entries(stats.kinds).map(([kind, t]) => ({ labels: { kind }, value: t.requestBytes }))
  },
  {
    name: 'beacon_hbase_response_frames_total',
    help: 'HBase RPC answers read, by kind (answers to calls that had timed out are left out)',
    read: (stats) => Object.entries(stats.kinds).map(([kind, t]) => ({ labels: { kind }, value: t.responseFrames }))
  },
  {
    name: 'beacon_hbase_response_bytes_total',
    help: 'Bytes of the HBase RPC answers read, length prefix included, by kind',
    read: (stats) => Object.entries(stats.kinds).map(([kind, t]) => ({ labels: { kind }, value: t.responseBytes }))
  },
  {
    name: 'beacon_hbase_socket_writes_total',
    help: 'Buffers handed to the sockets to HBase (the RPCs of one tick go in one write, the access log\'s those of ' +
      'one loop iteration; each connection\'s preamble is one), by service and server',
    read: (stats) => stats.connections.map((c) => ({
      labels: { service: c.service, server: c.server },
      value: c.socketWrites
    }))
  },
  {
    name: 'beacon_hbase_socket_reads_total',
    help: 'Chunks read from the sockets to HBase (\'data\' events), by service and server',
    read: (stats) => stats.connections.map((c) => ({
      labels: { service: c.service, server: c.server },
      value: c.socketReads
    }))
  },
  {
    name: 'beacon_hbase_connects_total',
    help: 'Connections opened to HBase, by service and server',
    read: (stats) => stats.connections.map((c) => ({
      labels: { service: c.service, server: c.server },
      value: c.connects
    }))
  }
]

/**
 * Registers the counters of `client`'s traffic on `register`.
 * @param {import('prom-client').Registry} register
 * @param {{ trafficStats: () => TrafficStats }} client
 * @returns {void}
 */
function registerHBaseTraffic (register, client) {
  for (const { name, help, read } of COUNTERS) {
    // Not a prom-client Metric class, but has the part of its interface the registry reads.
    register.registerMetric(/** @type {import('prom-client').Metric} */ (/** @type {unknown} */ ({
      name,
      help,
      type: 'counter',
      aggregator: 'sum',
      get: async () => ({ name, help, type: 'counter', values: read(client.trafficStats()), aggregator: 'sum' }),
      reset () {}
    })))
  }
}

module.exports = { registerHBaseTraffic, COUNTERS }
