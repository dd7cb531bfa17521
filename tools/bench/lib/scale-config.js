'use strict'

/**
 * The scale bench's config part (tools/bench/scale.js): `ids` ids seeded in `beacon_config` in bulk
 * (./config-seed.js: Multi puts in the store's format, stopping at `seedBudgetS` with the ids
 * 1..k it wrote; the load then draws over those), then for each LRU size a real server
 * cluster (server.js, the endpoints' `cache.max` set in a settings file) driven by the
 * open-loop generator (./scale-load.js) on `sample3` and `sample5`, ids drawn uniformly and with
 * a Zipf skew over all of them: a warm-up, then a measured window with the server's own
 * counters (/metrics: cache outcomes, config RPCs) read before and after, its processes' CPU
 * and RSS from /proc, and the generator's latency from each request's due time.
 */

const crypto = require('node:crypto')
const os = require('node:os')
const fs = require('node:fs')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { settings: { LRU_CACHE_DEFAULTS } } = require('../../../index.js')
const { createSampler, readAll, withDescendants } = require('./proc-sampler')
const { startNode, waitForHttp, firstJsonLine } = require('./processes')
const { configCase } = require('./scale-report')
const { cacheMemory } = require('./cache-memory')
const { seedConfigRows } = require('./config-seed')
const { runTool } = require('../../dev-hbase')

const ROOT = path.join(__dirname, '..', '..', '..')
const LOAD = path.join(__dirname, 'scale-load.js')
const MIB = 2 ** 20

/**
 * @typedef {object} ConfigPartContext
 * @property {Readonly<Record<string, any>>} opts
 * @property {any} client the HBase client (the `@beacon/hbase-client` package)
 * @property {number} pid the HBase JVM
 * @property {string[]} bootstrap
 * @property {string} classpath
 * @property {(line: string) => void} log
 * @property {{ ids: number, lrus: number[], endpoints: string[], dists: Array<'uniform'|'zipf'>, s: number, rate: number,
 *   connections: number, warmupS: number, measureS: number, workers: number, port: number, seedBudgetS: number }} params
 */

/**
 * The RSS of each process of the server cluster now (primary first, then its workers).
 * @param {number} primaryPid
 * @returns {number[]} MiB
 */
function clusterRss (primaryPid) {
  const stats = readAll()
  return withDescendants([primaryPid], stats).sort((a, b) => a - b)
    .map((pid) => Math.round(/** @type {any} */ (stats.get(pid)).rssBytes / MIB))
}

/**
 * One load job in its own process.
 * @param {Record<string, any>} job ./scale-load.js's
 * @returns {Promise<Record<string, any>>} its summary
 */
async function load (job) {
  const child = spawn(process.execPath, [LOAD, JSON.stringify(job)], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (c) => { stderr += c })
  try {
    return await firstJsonLine(child, job.durationMs + 60000, `load (${job.endpoint} ${job.dist})`)
  } catch (err) {
    child.kill('SIGKILL')
    throw new Error(`${err.message}${stderr ? `; stderr: ${stderr.trim()}` : ''}`)
  }
}

/**
 * @param {string} url
 * @returns {Promise<string>}
 */
async function scrape (url) {
  const res = await fetch(url)
  if (!res.ok) throw new Error(`scale: ${url} answered ${res.status}`)
  return res.text()
}

/**
 * Seeds config rows for ids 1..`ids`, or fewer when `seedBudgetS` runs out, then flushes the table.
 * @param {ConfigPartContext} ctx
 * @returns {Promise<{ rows: number, seconds: number, hbaseCpuUs: number|null, seederCpuUs: number|null }>}
 */
async function seed (ctx) {
  const { params, log, classpath, pid, opts, client } = ctx
  log(`scale: config: seeding ${params.ids.toLocaleString('en-US')} ids into ${opts.configTable}…`)
  const sampler = createSampler({ hbase: () => [pid], seeder: () => [process.pid] })
  sampler.start()
  const deadline = Date.now() + params.seedBudgetS * 1000
  const { seeded, seconds } = await seedConfigRows({ client, table: opts.configTable, ids: params.ids, deadline, log })
  await runTool(opts, classpath, ['flush', '--table', opts.configTable, '--timeout-ms', '600000'], { tool: 'BeaconHBaseStore' })
  const sampled = sampler.stop()
  log(`scale: config: seeded ${seeded} rows in ${seconds.toFixed(0)} s${seeded < params.ids ? ' (the seed budget ran out)' : ''}`)
  return { rows: seeded, seconds, hbaseCpuUs: sampled.hbase.cpuUs, seederCpuUs: sampled.seeder.cpuUs }
}

/**
 * A server cluster whose sample endpoints cache `lru` entries.
 * @param {ConfigPartContext} ctx
 * @param {number} lru
 */
async function startServer (ctx, lru) {
  const { opts, params, bootstrap, log } = ctx
  const dir = path.join(opts.stateDir, 'server')
  fs.mkdirSync(dir, { recursive: true })
  const configFile = path.join(dir, `settings-lru-${lru}.json`)
  const cache = { type: 'lru', max: lru }
  fs.writeFileSync(configFile, JSON.stringify({ endpoints: Object.fromEntries(params.endpoints.map((e) => [e, { cache }])) }, null, 2))
  const env = {
    PORT: String(params.port),
    ADMIN_PORT: String(params.port + 1),
    HOST: '127.0.0.1',
    ADMIN_HOST: '127.0.0.1',
    BEACON_WORKERS: String(params.workers),
    BEACON_HBASE_BOOTSTRAP: bootstrap.join(','),
    BEACON_STATE_DIR: dir,
    BEACON_CONFIG_FILE: configFile,
    BEACON_ADMIN_TOKEN: crypto.randomBytes(16).toString('hex'),
    BEACON_LOG_LEVEL: 'warn'
  }
  const server = startNode(path.join(ROOT, 'server.js'), [], { env, log, name: 'beacon' })
  try {
    await waitForHttp(`http://127.0.0.1:${params.port}/api/${params.endpoints[0]}.js?id=1&callback=cb`, { child: server })
    await waitForHttp(`http://127.0.0.1:${params.port + 1}/readyz`, { child: server, timeoutMs: 60000 })
  } catch (err) {
    await server.stop(10000)
    throw err
  }
  return server
}

/**
 * One case on a running server: a warm-up, then the measured window.
 * @param {ConfigPartContext} ctx
 * @param {{ lru: number, endpoint: string, dist: 'uniform'|'zipf', ids: number, server: any }} c
 * @returns {Promise<Record<string, any>>} ./scale-report.js configCase()
 */
async function measureCase (ctx, { lru, endpoint, dist, ids, server }) {
  const { params, pid: hbasePid } = ctx
  const metricsUrl = `http://127.0.0.1:${params.port + 1}/metrics`
  const job = { host: '127.0.0.1', port: params.port, endpoint, dist, ids, s: params.s, rate: params.rate, connections: params.connections }
  await load({ ...job, durationMs: params.warmupS * 1000 })
  const before = await scrape(metricsUrl)
  const sampler = createSampler({ app: () => [server.pid], hbase: () => [hbasePid] })
  sampler.start()
  let run
  let sampled
  try {
    run = await load({ ...job, durationMs: params.measureS * 1000 })
  } finally {
    sampled = sampler.stop()
  }
  const after = await scrape(metricsUrl)
  const rssMiB = clusterRss(/** @type {number} */ (server.pid))
  const row = configCase({ lru, endpoint, dist, before, after, run, sampled, rssMiB })
  row.loadAverage = Math.round(os.loadavg()[0] * 10) / 10
  return row
}

/**
 * @param {ConfigPartContext} ctx
 * @returns {Promise<Record<string, any>>} the part's measurements; a case or a server that failed
 *   is in `problems` and the others go on
 */
async function runConfigPart (ctx) {
  const { params, log } = ctx
  const seeded = await seed(ctx)
  const ids = seeded.rows
  log(`scale: config: a full cache of ${params.lrus.join(', ')} entries, in a process each…`)
  const fullCache = await cacheMemory(params.lrus)
  const cases = []
  /** @type {string[]} */
  const problems = []
  for (const lru of params.lrus) {
    log(`scale: config: LRU ${lru.toLocaleString('en-US')} entries: starting the server (${params.workers} workers)…`)
    let server
    try {
      server = await startServer(ctx, lru)
    } catch (err) {
      problems.push(`LRU ${lru}: the server did not start: ${err.message}`)
      log(`scale: config: PROBLEM: ${problems[problems.length - 1]}`)
      continue
    }
    const rssAtStart = clusterRss(/** @type {number} */ (server.pid))
    try {
      for (const endpoint of params.endpoints) {
        for (const dist of params.dists) {
          try {
            const row = await measureCase(ctx, { lru, endpoint, dist, ids, server })
            row.rssAtStartMiB = rssAtStart
            cases.push(row)
            log(`scale: config: lru ${lru} ${endpoint} ${dist}: ${Math.round(row.rps)} req/s, hit ratio ${row.hitRatio?.toFixed(4)}, ` +
              `store reads ${Math.round(row.storeReadsPerSec ?? 0)}/s, config RPCs ${Math.round(row.configRpcsPerSec ?? 0)}/s, ` +
              `p99 ${row.p99} ms, RSS ${row.rssMiB.join('+')} MiB`)
          } catch (err) {
            problems.push(`LRU ${lru} ${endpoint} ${dist}: ${err.message}`)
            log(`scale: config: PROBLEM: ${problems[problems.length - 1]}`)
          }
        }
      }
    } finally {
      const code = await server.stop(30000)
      if (code !== 0 && code !== 75) log(`scale: config: the server exited ${code}`)
    }
  }
  return {
    ids,
    requestedIds: params.ids,
    workers: params.workers,
    ttlS: LRU_CACHE_DEFAULTS.ttlMs / 1000,
    staleS: LRU_CACHE_DEFAULTS.staleWhileRevalidateMs / 1000,
    seeded,
    fullCache,
    cases,
    problems
  }
}

module.exports = { runConfigPart, clusterRss }
