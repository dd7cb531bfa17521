'use strict'

/**
 * The toggle store: the one owner of how toggles live in the config table. Everyone who reads or
 * writes that table goes through here: the HBase config source, the admin API, the seeding
 * script, the endpoint switches and the change feed.
 *
 * Row format:
 *   `<id>`                one cell `<family>:<qualifier>` holding the whole toggles object as
 *                         JSON. One cell keeps an update atomic and a read to one KeyValue; the
 *                         cell's timestamp (set by the RegionServer) is the version (ETags).
 *   `!endpoint:<name>`    an endpoint switch, `{"enabled":bool,"at":ms}` in the same column.
 *   `!rollout:<name>`     an endpoint's rollout (lib/toggles/rollout.js), `{"rollout":{…}|null,"at":ms}`
 *                         in the same column; null: removed at runtime (whatever the settings say).
 *   `!changes`            the change feed: one cell per recently changed id, qualifier = id.
 *   `!privacy:ip-hash`    the secret the access log's hashed addresses derive their daily keys
 *                         from (lib/toggles/hash-secret.js): 32 random bytes in the same column,
 *                         written once, by whichever host finds it absent first.
 * Ids are safe names ([A-Za-z0-9_-], lib/names.js), so a row starting with `!` is never an id
 * and sorts before every id: a scan of ids starts at FIRST_ID_ROW, past the reserved rows.
 */

const { findCell } = require('@beacon/hbase-client')

const SWITCH_ROW_PREFIX = '!endpoint:'
const ROLLOUT_ROW_PREFIX = '!rollout:'
const CHANGES_ROW = '!changes'
const HASH_SECRET_ROW = '!privacy:ip-hash'
const FIRST_ID_ROW = '-' // the lowest character an id may start with

/**
 * What the store's calls count under in the HBase client's traffic (packages/hbase-client/lib/traffic.js): the
 * config reads of the caches (misses, refreshes, sample2's every request), the endpoint-switch
 * and change-feed polls, the hash secret, and the admin API's writes and listings.
 */
const KINDS = Object.freeze({
  config: 'config',
  knownIds: 'config-scan',
  switches: 'switches',
  rollouts: 'rollouts',
  changes: 'changes',
  privacy: 'privacy',
  admin: 'config-admin'
})

/**
 * @typedef {{ toggles: Record<string, unknown>, version: string, timestamp: number }} StoredToggles
 * @typedef {StoredToggles | { invalid: string } | null} DecodedRow
 *   null: nothing stored; `invalid`: a cell that is not a JSON object (why)
 */

/**
 * Split keys that cut the config table into `regions` ranges by the id's first digit (the
 * sample ids are 1..N in decimal), for a cluster where each RegionServer should hold a share.
 * The reserved `!` rows sort before every id and live in the first region.
 * @param {number} regions 1..9
 * @returns {string[]}
 */
function configSplitKeys (regions) {
  if (!Number.isInteger(regions) || regions < 1 || regions > 9) throw new RangeError('config regions must be 1..9')
  const keys = []
  for (let i = 1; i < regions; i++) keys.push(String(1 + Math.round((9 * i) / regions)))
  return keys
}

/**
 * @param {Record<string, unknown>} toggles
 * @returns {string} the cell value
 */
function encodeToggles (toggles) {
  return JSON.stringify(toggles)
}

/**
 * @param {{ value: Buffer, timestamp: number }|null|undefined} cell
 * @returns {DecodedRow}
 */
function decodeToggles (cell) {
  if (!cell) return null
  let value
  try {
    value = JSON.parse(cell.value.toString('utf8'))
  } catch {
    value = undefined
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    return { invalid: 'stored config is not a JSON object' }
  }
  return { toggles: value, version: 'h' + cell.timestamp.toString(36), timestamp: cell.timestamp }
}

/**
 * @param {object} options
 * @param {import('@beacon/hbase-client').HBaseClient} options.client
 * @param {string} options.table the config table
 * @param {string} options.family
 * @param {string} options.qualifier
 * @param {number} [options.timeoutMs] deadline of one store call, retries included
 */
function createToggleStore ({ client, table, family, qualifier, timeoutMs }) {
  const columns = [`${family}:${qualifier}`]
  /** @param {import('@beacon/hbase-client').Row|null} row @returns {DecodedRow} */
  const decodeRow = (row) => (row ? decodeToggles(findCell(row, family, qualifier)) : null)

  /**
   * One reserved row per endpoint (`<prefix><name>`), read in one multi-get and decoded; an
   * endpoint whose row is absent, not JSON or not of the shape (decode answers undefined) is left
   * out: a hand-edited row is not ours to fix, and the settings value applies.
   * @template T
   * @param {string} prefix
   * @param {string[]} names
   * @param {string} kind
   * @param {(value: any) => T|undefined} decode
   * @returns {Promise<Map<string, T>>}
   */
  async function readStateRows (prefix, names, kind, decode) {
    const rows = await client.multiGet(table, names.map((n) => prefix + n), { columns, timeout: timeoutMs, kind })
    const failed = rows.find((row) => row instanceof Error)
    if (failed) throw failed
    const states = new Map()
    rows.forEach((row, i) => {
      const cell = row && !(row instanceof Error) && findCell(row, family, qualifier)
      if (!cell) return
      let state
      try {
        state = decode(JSON.parse(cell.value.toString('utf8')))
      } catch {
        return
      }
      if (state !== undefined) states.set(names[i], state)
    })
    return states
  }

  return {
    table,
    timeoutMs,

    /**
     * @param {string} id
     * @param {{ timeoutMs?: number }} [opts] a shorter deadline than the store's
     * @returns {Promise<DecodedRow>}
     */
    async read (id, opts) {
      return decodeRow(await client.get(table, id, {
        columns,
        timeout: (opts && opts.timeoutMs) || timeoutMs,
        kind: KINDS.config
      }))
    },

    /**
     * One multi-get (one RPC per RegionServer) for many ids.
     * @param {string[]} ids
     * @param {{ timeoutMs?: number }} [opts] a shorter deadline than the store's
     * @returns {Promise<Array<DecodedRow|Error>>} per id: its row, or the error of that id alone
     */
    async readMany (ids, opts) {
      const rows = await client.multiGet(table, ids, {
        columns,
        timeout: (opts && opts.timeoutMs) || timeoutMs,
        kind: KINDS.config
      })
      return rows.map((row) => (row instanceof Error ? row : decodeRow(row)))
    },

    /**
     * @param {string} id
     * @param {Record<string, unknown>} toggles
     * @returns {Promise<void>}
     */
    async write (id, toggles) {
      await client.put(table, id, { [family]: { [qualifier]: encodeToggles(toggles) } },
        { timeout: timeoutMs, kind: KINDS.admin })
    },

    /**
     * Many ids' toggles in one multi-put (one RPC per RegionServer): a bulk import's batch.
     * @param {Array<{ id: string, toggles: Record<string, unknown> }>} items
     * @returns {Promise<Array<null|Error>>} per item: written (null), or the error of that item alone
     */
    async writeMany (items) {
      const puts = items.map(({ id, toggles }) => ({ row: id, cells: { [family]: { [qualifier]: encodeToggles(toggles) } } }))
      return client.multiPut(table, puts, { timeout: timeoutMs, kind: KINDS.admin })
    },

    /**
     * Every id's row from `start` on, in key order, one page of `caching` rows at a time (an
     * export). Breaking out of the loop closes the scanner.
     * @param {{ start?: string, caching?: number }} [options]
     * @returns {AsyncGenerator<Array<{ id: string, row: DecodedRow }>>}
     */
    async * scanRows ({ start, caching = 1000 } = {}) {
      const from = typeof start === 'string' && start > FIRST_ID_ROW ? start : FIRST_ID_ROW
      const pages = client.scanBatches(table, { startRow: from, columns, caching, kind: KINDS.admin })
      for await (const rows of pages) yield rows.map((row) => ({ id: row.row.toString(), row: decodeRow(row) }))
    },

    /**
     * @param {string} id
     * @returns {Promise<void>}
     */
    async remove (id) {
      await client.delete(table, id, { timeout: timeoutMs, kind: KINDS.admin })
    },

    /**
     * Ids in key order from `start` (reserved rows skipped).
     * @param {{ start?: string, limit: number }} options
     * @returns {Promise<string[]>}
     */
    async listIds ({ start, limit }) {
      const from = typeof start === 'string' && start > FIRST_ID_ROW ? start : FIRST_ID_ROW
      const ids = []
      const scan = client.scan(table, { startRow: from, limit, keysOnly: true, caching: limit, kind: KINDS.admin })
      for await (const row of scan) ids.push(row.row.toString())
      return ids
    },

    /**
     * Every id that has a row, in key order, read keys-only: one array per page of `caching` rows.
     * Breaking out of the loop closes the scanner.
     * @param {{ caching?: number }} [options]
     * @returns {AsyncGenerator<string[]>}
     */
    async * scanIds ({ caching = 5000 } = {}) {
      const pages = client.scanBatches(table, { startRow: FIRST_ID_ROW, keysOnly: true, caching, kind: KINDS.knownIds })
      for await (const rows of pages) yield rows.map((row) => row.row.toString())
    },

    /**
     * Stored endpoint switches; an endpoint without a (readable) row is left out.
     * @param {string[]} names
     * @returns {Promise<Map<string, { enabled: boolean, at: number }>>}
     */
    async readSwitches (names) {
      return readStateRows(SWITCH_ROW_PREFIX, names, KINDS.switches, (value) => (
        value && typeof value.enabled === 'boolean' ? { enabled: value.enabled, at: Number(value.at) || 0 } : undefined
      ))
    },

    /**
     * @param {string} name
     * @param {boolean} enabled
     * @returns {Promise<void>}
     */
    async writeSwitch (name, enabled) {
      await client.put(
        table,
        SWITCH_ROW_PREFIX + name,
        { [family]: { [qualifier]: JSON.stringify({ enabled, at: Date.now() }) } },
        { timeout: timeoutMs, kind: KINDS.admin }
      )
    },

    /**
     * Stored rollouts as stored (checked by the caller: lib/toggles/rollout.js parseRollout); an
     * endpoint without a (readable) row is left out.
     * @param {string[]} names
     * @returns {Promise<Map<string, { rollout: unknown, at: number }>>} rollout null: removed
     */
    async readRollouts (names) {
      return readStateRows(ROLLOUT_ROW_PREFIX, names, KINDS.rollouts, (value) => (
        value && 'rollout' in value ? { rollout: value.rollout, at: Number(value.at) || 0 } : undefined
      ))
    },

    /**
     * @param {string} name
     * @param {object|null} rollout a parsed rollout, or null to remove it
     * @param {number} at when it was made (epoch ms): its version
     * @returns {Promise<void>}
     */
    async writeRollout (name, rollout, at) {
      await client.put(
        table,
        ROLLOUT_ROW_PREFIX + name,
        { [family]: { [qualifier]: JSON.stringify({ rollout, at }) } },
        { timeout: timeoutMs, kind: KINDS.admin }
      )
    },

    /**
     * The stored secret of hashed access-log addresses, as stored (never log it).
     * @returns {Promise<Buffer|null>} null: none stored yet
     */
    async readHashSecret () {
      const row = await client.get(table, HASH_SECRET_ROW, { columns, timeout: timeoutMs, kind: KINDS.privacy })
      const cell = findCell(row, family, qualifier)
      return cell ? cell.value : null
    },

    /**
     * Stores `secret` only if none is stored (HBase check-and-put: the first writer wins).
     * @param {Buffer} secret
     * @returns {Promise<boolean>} true: this one was stored; after a retried call it may have
     *   been stored and still say false, so the caller reads the row back
     */
    async createHashSecret (secret) {
      const cells = { [family]: { [qualifier]: secret } }
      const absent = { column: columns[0], value: null }
      return client.checkAndPut(table, HASH_SECRET_ROW, absent, cells, { timeout: timeoutMs, kind: KINDS.privacy })
    },

    /**
     * The change feed's cells: which ids changed, and when (RegionServer clock).
     * @returns {Promise<Array<{ id: string, at: number }>>}
     */
    async readChanges () {
      const row = await client.get(table, CHANGES_ROW, { families: [family], timeout: timeoutMs, kind: KINDS.changes })
      return row ? row.cells.map((c) => ({ id: c.qualifier, at: Number(c.timestamp) })) : []
    },

    /**
     * Records that `id` changed and drops records older than `retainMs` before the newest.
     * @param {string} id
     * @param {number} retainMs
     * @returns {Promise<void>}
     */
    async recordChange (id, retainMs) {
      await client.put(table, CHANGES_ROW, { [family]: { [id]: '1' } }, { timeout: timeoutMs, kind: KINDS.changes })
      const changes = await this.readChanges()
      const newest = Math.max(...changes.map((c) => c.at))
      const old = changes.filter((c) => c.at < newest - retainMs).map((c) => `${family}:${c.id}`)
      if (old.length) await client.delete(table, CHANGES_ROW, { columns: old, timeout: timeoutMs, kind: KINDS.changes })
    }
  }
}

module.exports = {
  createToggleStore,
  configSplitKeys,
  encodeToggles,
  decodeToggles,
  SWITCH_ROW_PREFIX,
  CHANGES_ROW,
  HASH_SECRET_ROW,
  FIRST_ID_ROW,
  KINDS
}
