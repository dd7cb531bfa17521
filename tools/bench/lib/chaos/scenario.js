'use strict'

/**
 * The bench's `chaos` scenario: a 3-RegionServer HBase cluster with a backup master of its own
 * (state in .state/hbase-chaos-bench, ZooKeeper 2351, masters 16800-16801, RegionServers
 * 16820-16822; wiped before and after), the server cluster on it (2 workers, ports --port+5 and
 * +6), and the bench's open-loop generator on sample2, sample3 and sample5 at a constant rate each
 * while the seeded driver acts for --chaos-seconds (index.js). Loopback only, whatever the
 * topology of the other scenarios: the cluster's six JVMs and the app share this machine.
 */

const path = require('node:path')
const hbase = require('../../../dev-hbase')
const { runOpenLoop } = require('../open-loop')
const { runChaos } = require('./index')
const { chaosMarkdown } = require('./report')

const ROOT = path.join(__dirname, '..', '..', '..', '..')
const CLUSTER = Object.freeze({
  stateDir: path.join(ROOT, '.state', 'hbase-chaos-bench'),
  regionServers: 3,
  masters: 2,
  zkPort: 2351,
  masterPort: 16800,
  rsPort: 16820,
  masterInfoPort: -1,
  rsInfoPort: -1,
  seedCount: 500
})
// The load stops when the run says so (after the cluster settled); this only bounds it.
const MAX_LOAD_MS = 30 * 60 * 1000
const ENDPOINTS = ['sample2', 'sample3', 'sample5']

/**
 * Open loop at `rate` req/s per endpoint over `connections` keep-alive connections each, ids
 * uniformly random, every sample5 request marked; runs until stop().
 * @param {{ rate: number, connections: number }} load
 * @param {Record<string, object>} results each endpoint's open-loop summary, once stopped
 * @returns {import('./index').StartLoad}
 */
function openLoops ({ rate, connections }, results) {
  return ({ url, ids, nextMark, record }) => {
    const { hostname, port } = new URL(url)
    const controller = new AbortController()
    const runs = ENDPOINTS.map((endpoint) => runOpenLoop({
      host: hostname,
      port: Number(port),
      rate,
      connections,
      durationMs: MAX_LOAD_MS,
      timeoutMs: 15000,
      precise: false,
      signal: controller.signal,
      next: () => {
        const id = String(1 + Math.floor(Math.random() * ids))
        const mark = endpoint === 'sample5' ? nextMark() : undefined
        return /** @type {any} */ ({ path: `/api/${endpoint}.js?id=${id}&callback=cb`, headers: mark && { 'user-agent': mark }, id, mark })
      },
      onAnswer: (/** @type {any} */ req, o) =>
        record({ endpoint, id: req.id, mark: req.mark, sent: o.sent, done: o.done, status: o.status, error: o.error })
    }).then((r) => { results[endpoint] = r }))
    return {
      async stop () {
        controller.abort()
        await Promise.all(runs)
      }
    }
  }
}

/**
 * @param {{ params: Record<string, any>, log: (line: string) => void, stateDir: string }} ctx
 * @returns {Promise<object>} the report section: title, description, rows (the load per endpoint),
 *   markdown (counts and the action table) and the run's result
 */
async function chaos (ctx) {
  const p = ctx.params
  const opts = hbase.resolveOptions(CLUSTER)
  const log = (line) => { if (!line.startsWith('[beacon]')) ctx.log(line) }
  ctx.log(`chaos: a ${opts.regionServers}-RegionServer cluster with a backup ` +
    `master in ${path.relative(ROOT, opts.stateDir)} (ZooKeeper ${opts.zkPort})…`)
  await hbase.wipe(opts)
  try {
    const up = await hbase.up(opts, { log })
    const loads = {}
    const r = await runChaos({
      hbaseOptions: opts,
      bootstrap: up.bootstrap,
      durationMs: p.chaosSeconds * 1000,
      seed: p.chaosSeed,
      startLoad: openLoops({ rate: p.chaosRate, connections: p.chaosConnections }, loads),
      ports: { port: p.port + 5, adminPort: p.port + 6 },
      stateDir: path.join(ctx.stateDir, 'chaos'),
      ids: opts.seedCount,
      workers: 2,
      log
    })
    const markdown = chaosMarkdown(r)
    ctx.log(markdown.join('\n'))
    const rows = {}
    for (const e of ENDPOINTS) rows[`${e} during chaos`] = { generator: 'open-loop/timer', connections: p.chaosConnections, ...loads[e] }
    const { windows, ...result } = r
    return {
      title: 'Chaos under load',
      description: `HBase cluster of its own (${opts.regionServers} RegionServers, 2 masters, started in ` +
        `${(up.startedMs / 1000).toFixed(0)} s), the server cluster on it (2 workers), open loop at ${p.chaosRate} req/s on each of ` +
        `${ENDPOINTS.join(', ')} (${p.chaosConnections} keep-alive connections each; latency from each request's due time) while a ` +
        `seeded driver (seed ${p.chaosSeed}) acts every 10–20 s for ${p.chaosSeconds} s: SIGKILL a RegionServer and start it again ` +
          '15–25 ' +
        's later, restart one gracefully, move a config or access-log region, split an access-log region, SIGKILL the active master and ' +
        'start it again as backup. Counted afterwards with HBase\'s own Java client. Loopback only; not part of --quick.',
      rows,
      markdown,
      result: { ...result, windows: windows.length }
    }
  } finally {
    await hbase.wipe(opts)
  }
}

module.exports = { chaos, openLoops, CLUSTER }
