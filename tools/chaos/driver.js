'use strict'

/**
 * The chaos driver, in the spirit of HBase's ChaosMonkey: on a seeded schedule (one action every
 * 10–20 s by default) it picks one of
 *
 * - kill-rs: SIGKILL a RegionServer, start it again after a seeded 15–25 s;
 * - restart-rs: a graceful restart of a RegionServer (SIGTERM: it closes its regions, then starts);
 * - move-region: move a random region of the config or the access-log table (the master picks
 *   the destination);
 * - split-region: split a random access-log region (plan.js says where);
 * - kill-master: SIGKILL the active master; once the backup took over, start it again (as backup);
 *
 * never leaving fewer than N-1 RegionServers live (one RegionServer or master down at a time) and
 * killing a master only while a backup is registered. Every action is recorded with its time, its
 * steps and their durations; what the cluster did in response is read from the watcher (watch.js).
 * The driver only acts; it never decides whether beacon coped (analysis.js does).
 */

const { setTimeout: sleep } = require('node:timers/promises')
const { splitPoint } = require('./plan')

/** @typedef {import('./timeline').Action} Action */

const KEY = (buf) => Buffer.from(buf || []).toString('latin1')

/**
 * @param {object} deps
 * @param {Readonly<Record<string, any>>} deps.opts tools/dev-hbase options of the cluster
 * @param {typeof import('../dev-hbase')} deps.hbase
 * @param {import('@beacon/hbase-client').HBaseClient} deps.client for region lists, moves, splits
 * @param {Awaited<ReturnType<typeof import('./watch').startWatch>>} deps.watch
 * @param {ReturnType<typeof import('./plan').createPlan>} deps.plan
 * @param {(line: string) => void} [deps.log]
 * @param {{ restartAfterMs?: [number, number], failoverTimeoutMs?: number, rejoinTimeoutMs?: number }} [deps.timing]
 */
function createDriver ({ opts, hbase, client, watch, plan, log = () => {}, timing = {} }) {
  const { restartAfterMs = [15000, 25000], failoverTimeoutMs = 90000, rejoinTimeoutMs = 90000 } = timing
  const rsAddress = (i) => `${opts.advertiseHost}:${opts.rsPort + i - 1}`
  const masterIndex = (address) => Number(address.split(':').pop()) - opts.masterPort + 1
  const rsIndex = (address) => Number(address.split(':').pop()) - opts.rsPort + 1
  /** @type {Action[]} */
  const actions = []
  const running = new Set()
  const busy = { rs: false, master: false, admin: false }

  function eligible () {
    const look = watch.latest()
    const kinds = new Set()
    const healthy = look && !look.error
    const allLive = healthy && (look.servers || []).filter((s) => s.regions).length === opts.regionServers
    if (!busy.rs && allLive) kinds.add('kill-rs').add('restart-rs')
    if (!busy.master && healthy && look.active && look.backups.length > 0) kinds.add('kill-master')
    if (!busy.admin) kinds.add('move-region').add('split-region')
    return kinds
  }

  /** Runs one step of an action, timed; a failed step ends the action with its error. */
  async function step (action, what, fn) {
    const s = { what, at: Date.now(), ms: null }
    action.steps.push(s)
    try {
      const result = await fn()
      s.ms = Date.now() - s.at
      return result
    } catch (err) {
      s.ms = Date.now() - s.at
      s.error = err.message.split('\n')[0]
      throw err
    }
  }

  /**
   * An admin call on a region that meta lists but that is still opening (reassigned after an
   * earlier kill) is refused as "not OPEN": like ChaosMonkey, which acts on online regions, it is
   * tried again once the region is open, for up to rejoinTimeoutMs (the retries are counted).
   */
  async function whenOpen (fn, action) {
    const deadline = Date.now() + rejoinTimeoutMs
    for (;;) {
      try {
        return await fn()
      } catch (err) {
        if (!/is not OPEN/.test(err.message) || Date.now() > deadline) throw err
        action.detail.notOpenRetries = (action.detail.notOpenRetries || 0) + 1
        await new Promise((resolve) => setTimeout(resolve, 1000))
      }
    }
  }

  const waitRejoined = (address, oldStartCode) => watch.waitFor(`${address} live again`,
    (l) => (l.servers || []).some((s) => s.server === address && s.startCode !== oldStartCode && s.regions), rejoinTimeoutMs)

  const RUN = {
    async 'kill-rs' (action, draw) {
      const address = rsAddress(1 + Math.floor(draw.target * opts.regionServers))
      const server = watch.latest().servers.find((s) => s.server === address)
      Object.assign(action, { target: address, at: Date.now() })
      Object.assign(action.detail, {
        startCode: server.startCode,
        regions: server.regions.length,
        meta: server.regions.some((r) => r.startsWith('hbase:meta,')),
        restartAfterMs: draw.delayMs
      })
      await step(action, 'SIGKILL', () => hbase.kill(opts, { role: 'regionserver', index: rsIndex(address) }))
      action.doneAt = Date.now()
      await sleep(draw.delayMs)
      await step(action, 'start', () => hbase.restart(opts, { role: 'regionserver', index: rsIndex(address) }))
      action.detail.backAt = (await waitRejoined(address, server.startCode)).at
    },
    async 'restart-rs' (action, draw) {
      const address = rsAddress(1 + Math.floor(draw.target * opts.regionServers))
      const server = watch.latest().servers.find((s) => s.server === address)
      Object.assign(action, { target: address, at: Date.now() })
      Object.assign(action.detail, {
        startCode: server.startCode,
        regions: server.regions.length,
        meta: server.regions.some((r) => r.startsWith('hbase:meta,'))
      })
      await step(action, 'SIGTERM, start', () => hbase.restart(opts, { role: 'regionserver', index: rsIndex(address) }))
      action.doneAt = Date.now()
      action.detail.backAt = (await waitRejoined(address, server.startCode)).at
    },
    async 'kill-master' (action) {
      const address = watch.latest().active
      Object.assign(action, { target: address, at: Date.now() })
      await step(action, 'SIGKILL', () => hbase.kill(opts, { role: 'master', index: masterIndex(address) }))
      action.doneAt = Date.now()
      const taken = await watch.waitFor('a backup master taking over', (l) => Boolean(l.active) && l.active !== address, failoverTimeoutMs)
      Object.assign(action.detail, { newActive: taken.active, failoverAt: taken.at })
      await step(action, 'start as backup', () => hbase.restart(opts, { role: 'master', index: masterIndex(address) }))
      action.detail.backAt = (
        await watch.waitFor(`${address} registered as backup`, (l) => (l.backups || []).includes(address), rejoinTimeoutMs)
      ).at
    },
    async 'move-region' (action, draw) {
      const table = draw.table < 0.5 ? opts.configTable : opts.accessLogTable
      const regions = sortRegions(await client.regions(table))
      const region = regions[Math.floor(draw.target * regions.length)]
      Object.assign(action, { target: region.name, at: Date.now() })
      Object.assign(action.detail, { table, startKey: KEY(region.startKey), from: region.server })
      await step(action, 'move', () => whenOpen(() => client.admin.moveRegion(region.name), action))
      action.doneAt = Date.now()
      const after = (await client.regions(table)).find((r) => r.name === region.name)
      action.detail.to = after ? after.server : null
    },
    async 'split-region' (action, draw) {
      const table = opts.accessLogTable
      const now = Date.now()
      const candidates = sortRegions(await client.regions(table))
        .map((r) => ({ r, at: splitPoint({ startKey: KEY(r.startKey), endKey: KEY(r.endKey) }, opts.accessLogBuckets, now) }))
        .filter((c) => c.at !== null)
      if (candidates.length === 0) throw new Error('no access-log region can be split')
      const { r, at } = candidates[Math.floor(draw.target * candidates.length)]
      Object.assign(action, { target: r.name, at: Date.now() })
      Object.assign(action.detail, { table, startKey: KEY(r.startKey), splitAt: at, on: r.server })
      await step(action, 'split', () => whenOpen(() => client.admin.splitRegion(table, at), action))
      action.doneAt = Date.now()
      action.detail.regionsAfter = (await client.regions(table)).length
    }
  }
  const BUSY = { 'kill-rs': 'rs', 'restart-rs': 'rs', 'kill-master': 'master', 'move-region': 'admin', 'split-region': 'admin' }

  /** Starts one action in the background; the schedule does not wait for it. */
  function launch (kind, draw) {
    /** @type {Action} */
    const action = { n: actions.length + 1, kind, target: null, at: Date.now(), doneAt: null, error: null, detail: {}, steps: [] }
    actions.push(action)
    busy[BUSY[kind]] = true
    const p = RUN[kind](action, draw)
      .catch((err) => {
        action.error = err.message.split('\n')[0]
        if (action.doneAt === null) action.doneAt = Date.now()
      })
      .finally(() => {
        busy[BUSY[kind]] = false
        running.delete(p)
        log(
          `chaos #${action.n} ${kind} ${action.target || ''}: ` +
            `${action.error
              ? `failed: ${action.error}`
              : `done in ${action.doneAt - action.at} ms`}${action.steps.map((s) => `; ${s.what} ${s.ms} ms`).join('')}`
        )
      })
    running.add(p)
    return action
  }

  /**
   * Runs the schedule for `durationMs`: the first action after `firstDelayMs`, then one every
   * plan.gap(); waits for the last actions (and their restarts) to finish.
   * @param {{ durationMs: number, firstDelayMs?: number }} options
   * @returns {Promise<Action[]>}
   */
  async function run ({ durationMs, firstDelayMs = 5000 }) {
    const start = Date.now()
    for (let next = start + firstDelayMs; next < start + durationMs; next += plan.gap()) {
      await sleep(Math.max(0, next - Date.now()))
      const kind = plan.pick(eligible())
      // Every draw is made now, in schedule order, so the seed fixes them whatever finishes when.
      const draw = { target: plan.random(), table: plan.random(), delayMs: plan.between(restartAfterMs[0], restartAfterMs[1]) }
      if (kind) launch(kind, draw)
      else log('chaos: nothing can run now (a RegionServer, the master and the admin are all busy); skipped')
    }
    await Promise.all([...running])
    return actions
  }

  /**
   * Starts any JVM of the cluster that is not running (after a failed action) and records it.
   * @returns {Promise<void>}
   */
  async function restore () {
    const s = await hbase.status(opts)
    for (const p of s.processes.filter((p) => !p.pid && p.role !== 'zookeeper')) {
      const action = {
        n: actions.length + 1,
        kind: 'restore',
        target: p.name,
        at: Date.now(),
        doneAt: null,
        error: null,
        detail: {},
        steps: []
      }
      actions.push(action)
      try {
        await step(action, 'start', () => hbase.restart(opts, { role: p.role, index: p.index }))
      } catch (err) {
        action.error = err.message.split('\n')[0]
      }
      action.doneAt = Date.now()
    }
  }

  /**
   * What an operator does for a region left in transition: HBase 2.6 can lose a RegionServer's
   * "opened" report when the active master dies at that moment (the server retries the dead
   * master until it gives up and aborts itself, minutes later; seen in CI). A region that stays
   * OPENING or CLOSING on a live server for `stuckMs` after the chaos has its server restarted gracefully
   * (a 'restart-rs' action, reason in its detail); its regions are then reassigned.
   * @param {number} stuckMs
   * @returns {Promise<void>}
   */
  async function unstick (stuckMs) {
    const clear = await watch.waitFor('no region in transition', (l) => !l.error && l.rit === 0, stuckMs).then(() => true, () => false)
    if (clear) return
    const look = watch.latest()
    const stuckOn = (look.ritStates || []).filter((r) => (r.state === 'OPENING' || r.state === 'CLOSING') && r.server)
    const servers = new Set(stuckOn.map((r) => r.server))
    for (const address of servers) {
      const server = (look.servers || []).find((s) => s.server === address)
      if (!server) continue
      const stuck = stuckOn.filter((r) => r.server === address).map((r) => r.region)
      const reason = `stuck in transition: ${stuck.join(', ')}`
      const detail = { startCode: server.startCode, regions: (server.regions || []).length, reason }
      const action = {
        n: actions.length + 1, kind: 'restart-rs', target: address, at: Date.now(), doneAt: null, error: null, detail, steps: []
      }
      // (the same shape as the planned actions', so the timeline and the report read it alike)
      actions.push(action)
      log(`chaos: #${action.n} restart-rs ${address}: ${action.detail.reason} for ${stuckMs} ms (an operator's remedy)`)
      try {
        await step(action, 'SIGTERM, start', () => hbase.restart(opts, { role: 'regionserver', index: rsIndex(address) }))
        action.doneAt = Date.now()
        action.detail.backAt = (await waitRejoined(address, server.startCode)).at
      } catch (err) {
        action.error = err.message.split('\n')[0]
        action.doneAt = action.doneAt || Date.now()
      }
    }
  }

  return { run, restore, unstick, actions, eligible }
}

function sortRegions (regions) {
  return [...regions].sort((a, b) => Buffer.compare(Buffer.from(a.startKey || []), Buffer.from(b.startKey || [])))
}

module.exports = { createDriver }
