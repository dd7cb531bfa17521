'use strict'

/**
 * The app side of a chaos run: the real server cluster (`server.js`, its own state dir and ports)
 * on the chaos HBase, its caches warmed, and its access-log pipeline drained before counting.
 */

const http = require('node:http')
const path = require('node:path')
const { setTimeout: sleep } = require('node:timers/promises')
const { startNode, waitForHttp } = require('../bench')

const ROOT = path.join(__dirname, '..', '..')

/**
 * One GET; resolves with the status (0 and the error's code when there was no answer).
 * @param {string} url
 * @param {{ headers?: Record<string, string>, agent?: http.Agent|false, timeoutMs?: number }} [options]
 * @returns {Promise<{ status: number, body: string, error?: string }>}
 */
function get (url, { headers = {}, agent = false, timeoutMs = 15000 } = {}) {
  return new Promise((resolve) => {
    const req = http.get(url, { headers, agent, timeout: timeoutMs }, (res) => {
      const chunks = []
      res.on('data', (c) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', (/** @type {NodeJS.ErrnoException} */ err) => resolve({ status: 0, body: '', error: err.code || err.message }))
    })
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })))
    req.on('error', (/** @type {NodeJS.ErrnoException} */ err) => resolve({ status: 0, body: '', error: err.code || err.message }))
  })
}

/**
 * Starts `server.js` (a cluster primary and its workers) against `bootstrap` and waits until it
 * serves. Its log lines are kept (`lines`), so that a worker that died is seen.
 * @param {{ bootstrap: string[], port: number, adminPort: number, stateDir: string, workers?: number, env?: Record<string, string>,
 *   log?: (line: string) => void }} options
 */
async function startApp ({ bootstrap, port, adminPort, stateDir, workers = 2, env = {}, log = () => {} }) {
  const lines = []
  const server = startNode(path.join(ROOT, 'server.js'), [], {
    name: 'beacon',
    log: (line) => {
      lines.push(line)
      log(line)
    },
    env: {
      PORT: String(port),
      ADMIN_PORT: String(adminPort),
      HOST: '127.0.0.1',
      ADMIN_HOST: '127.0.0.1',
      BEACON_WORKERS: String(workers),
      BEACON_HBASE_BOOTSTRAP: bootstrap.join(','),
      BEACON_STATE_DIR: stateDir,
      BEACON_LOG_LEVEL: 'warn',
      ...env
    }
  })
  const url = `http://127.0.0.1:${port}`
  await waitForHttp(`${url}/api/sample1.js?id=1`, { child: server, timeoutMs: 120000 })
  return {
    url,
    adminUrl: `http://127.0.0.1:${adminPort}`,
    pid: server.pid,
    lines,
    /** Whether the primary is still running (it exits only when workers keep dying or on a signal). */
    alive: () => server.exitCode === null && server.signalCode === null,
    /** Log lines of workers that died (the primary replaces them and says so). */
    workerDeaths: () => lines.filter((l) => l.includes('worker died')),
    stop: (timeoutMs) => server.stop(timeoutMs)
  }
}

/**
 * Fills both cached endpoints' caches in every worker with every id: passes over the ids (each
 * id twice per endpoint, over fresh connections, which the primary deals round-robin but not in
 * any order a client controls) until the workers' cache misses add up to workers × ids per
 * endpoint, i.e. every worker read every id once (all answered 200, so all are cached).
 * @param {{ url: string, adminUrl: string }} app
 * @param {{ ids: number, workers: number, maxPasses?: number, concurrency?: number,
 *   headersOf: (endpoint: string) => Record<string, string>,
 *   record: (r: import('./analysis').LoadRecord) => void }} how headersOf: the headers of one request
 *   (sample5's carry their mark); record: every answer
 * @returns {Promise<{ passes: number, requests: number }>}
 */
async function warmCaches ({ url, adminUrl }, { ids, workers, maxPasses = 12, concurrency = 8, headersOf, record }) {
  const endpoints = ['sample3', 'sample5']
  let requests = 0
  for (let pass = 1; ; pass++) {
    const jobs = []
    for (let id = 1; id <= ids; id++) {
      for (const endpoint of endpoints) jobs.push({ endpoint, id: String(id) }, { endpoint, id: String(id) })
    }
    let next = 0
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (next < jobs.length) {
        const { endpoint, id } = jobs[next++]
        const headers = headersOf(endpoint)
        const sent = Date.now()
        const res = await get(`${url}/api/${endpoint}.js?id=${id}&callback=cb`, { headers })
        record({ endpoint, id, mark: headers['user-agent'], sent, done: Date.now(), status: res.status, error: res.error })
      }
    }))
    requests += jobs.length
    const misses = series(await scrape(adminUrl), /^beacon_config_lookups_total\{endpoint="(\w+)",outcome="miss"\} (\d+)$/gm)
    if (endpoints.every((e) => misses[e] === workers * ids)) return { passes: pass, requests }
    if (pass === maxPasses) {
      throw new Error(`chaos: caches not warm after ${pass} passes: misses ${JSON.stringify(misses)}, want ${workers * ids} per endpoint`)
    }
  }
}

/**
 * The server's /metrics text, summed over the workers by the primary.
 * @param {string} adminUrl
 * @returns {Promise<string>}
 */
async function scrape (adminUrl) {
  const res = await get(`${adminUrl}/metrics`)
  if (res.status !== 200) throw new Error(`chaos: ${adminUrl}/metrics answered ${res.status || res.error}`)
  return res.body
}

/**
 * One labelled series of a scrape.
 * @param {string} text
 * @param {RegExp} re global, multiline; captures (label value, number)
 * @returns {Record<string, number>}
 */
function series (text, re) {
  return Object.fromEntries([...text.matchAll(re)].map((m) => [m[1], Number(m[2])]))
}

/**
 * The HBase sink's backlog, summed over the workers (the primary aggregates /metrics).
 * @param {string} adminUrl
 * @returns {Promise<{ accepted: number, written: number, pending: number, journalPending: number, spilled: number, replayed: number,
 *   failed: number, shed: number }>}
 */
async function sinkBacklog (adminUrl) {
  const text = await scrape(adminUrl)
  const states = series(text, /^beacon_access_log_entries_total\{sink="hbase",state="(\w+)"\} (\d+)$/gm)
  const gauges = series(text, /^beacon_access_log_(pending|journal_pending)\{sink="hbase"\} (\d+)$/gm)
  const n = (v) => v || 0
  return {
    accepted: n(states.accepted),
    written: n(states.written),
    spilled: n(states.spilled),
    replayed: n(states.replayed),
    failed: n(states.failed),
    shed: n(states.shed),
    pending: n(gauges.pending),
    journalPending: n(gauges.journal_pending)
  }
}

/**
 * Waits until every accepted entry was written to HBase: nothing in memory, nothing in the spill
 * journal, accepted == written (replays included), twice in a row.
 * @param {string} adminUrl
 * @param {number} timeoutMs
 * @returns {Promise<Awaited<ReturnType<typeof sinkBacklog>> & { drainMs: number }>}
 */
async function drainAccessLog (adminUrl, timeoutMs) {
  const started = Date.now()
  let streak = 0
  for (;;) {
    const b = await sinkBacklog(adminUrl)
    streak = b.pending === 0 && b.journalPending === 0 && b.accepted === b.written ? streak + 1 : 0
    if (streak === 2) return { ...b, drainMs: Date.now() - started }
    if (Date.now() - started > timeoutMs) {
      throw new Error(`chaos: the access log did not drain within ${timeoutMs} ms: ${JSON.stringify(b)}`)
    }
    await sleep(500)
  }
}

module.exports = { get, startApp, warmCaches, sinkBacklog, drainAccessLog }
