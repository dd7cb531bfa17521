'use strict'

const { HBaseError, remoteError, clientClosed, mayHaveApplied } = require('./errors')
const { resultToRow } = require('./cells')
const { deadlineOf } = require('./region-op')

/**
 * @typedef {{ row: Buffer, get?: object, mutation?: object, table?: string }} Action one Get or one Mutation, on the
 *   batch's table unless it names its own
 * @typedef {import('./meta').Region} Region
 * @typedef {import('./meta').LocatedRegion} LocatedRegion
 * @typedef {{ region: Region, indexes: number[] }} RegionGroup actions (by index) of one region
 */

/**
 * Splits region groups so that no Multi RPC carries more than `max` actions.
 * @param {RegionGroup[]} groups
 * @param {number} max
 * @returns {RegionGroup[][]} one list of groups per Multi RPC
 */
function chunks (groups, max) {
  const out = []
  let current = []
  let size = 0
  for (const group of groups) {
    for (let from = 0; from < group.indexes.length; from += max) {
      const part = group.indexes.slice(from, from + max)
      if (size + part.length > max && current.length) {
        out.push(current)
        current = []
        size = 0
      }
      current.push({ region: group.region, indexes: part })
      size += part.length
    }
  }
  if (current.length) out.push(current)
  return out
}

/**
 * The MultiRequest for one server: a RegionAction per region group, its actions by index.
 * @param {Action[]} actions
 * @param {RegionGroup[]} groups
 * @returns {object} plain MultiRequest
 */
function multiRequest (actions, groups) {
  return {
    regionAction: groups.map(({ region, indexes }) => ({
      region: region.spec,
      action: indexes.map((i) => (actions[i].get
        ? { index: i, get: actions[i].get }
        : { index: i, mutation: actions[i].mutation }))
    }))
  }
}

/**
 * One batch: rounds of one Multi RPC per server (chunked by maxBatchActions), each round
 * retrying only the actions that failed retryably in the one before, until every action has
 * settled or the deadline passes.
 */
class Batch {
  /**
   * @param {import('./region-op').Core} core
   * @param {string} table
   * @param {Action[]} actions
   * @param {number} deadline epoch ms
   * @param {string} [kind] the tag its RPCs count under (traffic.js)
   * @param {boolean} [coalesce] its RPCs may wait for the loop's check phase to share a socket write (connection.js)
   */
  constructor (core, table, actions, deadline, kind, coalesce = false) {
    this.core = core
    this.table = table
    this.kind = kind
    this.coalesce = coalesce
    this.actions = actions
    this.deadline = deadline
    /** @type {Array<import('./cells').Row|null|Error>} */
    this.results = new Array(actions.length).fill(null)
    /** @type {Map<number, Error>} last retryable error of each action still to retry */
    this.lastError = new Map()
    /** @type {number[]} actions to send again in the next round */
    this.retry = []
    /** region results read so far, and which one answered each action (an unanswered one is not written) */
    this.answers = 0
    this.answeredIn = new Uint32Array(actions.length)
    /** 1 where an attempt may have been applied (sent, then no answer): its final error says so */
    this.maybeApplied = new Uint8Array(actions.length)
  }

  /**
   * @returns {Promise<Array<import('./cells').Row|null|Error>>}
   */
  async run () {
    const { policy } = this.core
    let pending = this.actions.map((_, i) => i)
    for (let attempt = 0; ; attempt++) {
      this.retry = []
      await this._round(pending)
      pending = this.retry
      if (!pending.length) break
      const wait = policy.aborted ? null : policy.waitBefore(attempt, undefined, this.deadline)
      // The sleep rejects when the client is destroyed meanwhile.
      if (wait === null || !(await policy.sleep(wait).then(() => true, () => false))) {
        for (const i of pending) this.results[i] = this._giveUp(i)
        break
      }
    }
    return this.results
  }

  /** @param {number[]} pending */
  async _round (pending) {
    const { locator, options } = this.core
    /** @type {Map<string, Map<Region, number[]>>} server → region → action indexes */
    const byServer = new Map()
    const group = (/** @type {LocatedRegion} */ region, /** @type {number} */ i) => {
      let regions = byServer.get(region.server)
      if (!regions) byServer.set(region.server, (regions = new Map()))
      const indexes = regions.get(region)
      if (indexes) indexes.push(i)
      else regions.set(region, [i])
    }
    // Cache hits are grouped synchronously; only misses pay for an async meta lookup.
    const misses = []
    for (const i of pending) {
      const region = locator.cached(this.actions[i].table || this.table, this.actions[i].row)
      if (region) group(region, i)
      else misses.push(i)
    }
    if (misses.length) {
      await Promise.all(misses.map(async (i) => {
        try {
          group(await locator.locate(this.actions[i].table || this.table, this.actions[i].row, this.deadline), i)
        } catch (err) {
          this._settle(i, /** @type {Error & { code?: string }} */ (err))
        }
      }))
    }
    const calls = []
    for (const [server, regions] of byServer) {
      const groups = [...regions].map(([region, indexes]) => ({ region, indexes }))
      for (const chunk of chunks(groups, options.maxBatchActions)) calls.push(this._multi(server, chunk))
    }
    await Promise.all(calls)
  }

  /**
   * @param {string} server
   * @param {RegionGroup[]} groups
   */
  async _multi (server, groups) {
    const { pool, locator, policy } = this.core
    const actions = this.actions
    const request = multiRequest(actions, groups)
    let res
    try {
      res = await pool.invoke(
        server,
        'ClientService',
        'Multi',
        request,
        policy.rpcTimeout(this.deadline),
        this.kind,
        this.coalesce
      )
    } catch (caught) {
      const err = /** @type {Error & { code?: string, relocate?: boolean }} */ (caught)
      const maybe = mayHaveApplied(err)
      for (const { region, indexes } of groups) {
        if (err.relocate) locator.invalidate(region)
        for (const i of indexes) {
          if (maybe) this.maybeApplied[i] = 1
          this._settle(i, err)
        }
      }
      return
    }
    const regionResults = res.regionActionResult || []
    groups.forEach(({ region, indexes }, g) => {
      const rar = regionResults[g]
      if (!rar || rar.exception) {
        const err = rar
          ? remoteError(rar.exception.name, rar.exception.value && rar.exception.value.toString(), { server })
          : new HBaseError('HBASE_PROTOCOL', 'Multi response is missing a region result', { retryable: true })
        if (err.relocate) locator.invalidate(region)
        for (const i of indexes) this._settle(i, err)
        return
      }
      let relocated = false
      const stamp = ++this.answers
      for (const roe of rar.resultOrException) {
        const i = roe.index
        this.answeredIn[i] = stamp
        if (roe.exception) {
          const err = remoteError(roe.exception.name, roe.exception.value && roe.exception.value.toString(), { server })
          if (err.relocate && !relocated) {
            relocated = true
            locator.invalidate(region)
          }
          this._settle(i, err)
        } else {
          this.results[i] = actions[i].get ? resultToRow(roe.result) : null
        }
      }
      // An action the server did not answer is not written: sent again, never taken as done.
      for (const i of indexes) {
        if (this.answeredIn[i] !== stamp) {
          this._settle(
            i,
            new HBaseError('HBASE_PROTOCOL', 'Multi response is missing an action result', { retryable: true })
          )
        }
      }
    })
  }

  /**
   * Records the failure of action `i`: to retry next round if retryable, final otherwise
   * (HBASE_CLIENT_CLOSED once the client is destroyed).
   * @param {number} i
   * @param {Error & { code?: string }} err
   */
  _settle (i, err) {
    if (this.core.policy.aborted) {
      this.results[i] = this._final(i, err.code === 'HBASE_CLIENT_CLOSED' ? err : clientClosed(err))
    } else if (err instanceof HBaseError && err.retryable) {
      this.lastError.set(i, err)
      this.retry.push(i)
    } else {
      this.results[i] = this._final(i, err)
    }
  }

  /**
   * Action `i`'s own copy of its final error (one error may fail a whole group), saying whether
   * any of its attempts may have been applied.
   * @param {number} i
   * @param {Error} err
   * @returns {Error & { outcomeUnknown: boolean }}
   */
  _final (i, err) {
    const own = Object.create(Object.getPrototypeOf(err), Object.getOwnPropertyDescriptors(err))
    own.outcomeUnknown = this.maybeApplied[i] === 1
    return own
  }

  /**
   * The final error of an action still failing at the deadline or when the client is destroyed.
   * @param {number} i
   * @returns {Error & { outcomeUnknown: boolean }}
   */
  _giveUp (i) {
    const cause = this.lastError.get(i)
    return this._final(i, this.core.policy.aborted
      ? clientClosed(cause)
      : new HBaseError(
        'HBASE_TIMEOUT',
        `action did not succeed within its deadline; last error: ${cause && cause.message}`,
        { retryable: true, cause }
      ))
  }
}

/**
 * Runs Get/Mutation actions grouped into one Multi RPC per server, retrying only the actions
 * that failed retryably, until all settle or the deadline passes. The promise never rejects:
 * each result is a Row or null (Get: row absent; Mutation: written) or that action's own error.
 * @param {import('./region-op').Core} core
 * @param {string} table
 * @param {Action[]} actions
 * @param {number} [timeout] ms, retries included; default operationTimeout
 * @param {string} [kind] the tag its RPCs count under (traffic.js)
 * @param {boolean} [coalesce] its RPCs may wait for the loop's check phase to share a socket write (connection.js)
 * @returns {Promise<Array<import('./cells').Row|null|Error>>}
 */
function runBatch (core, table, actions, timeout, kind, coalesce = false) {
  return new Batch(core, table, actions, deadlineOf(core, timeout), kind, coalesce).run()
}

module.exports = { runBatch, chunks }
