'use strict'

const { accessLogRowKey } = require('../access-log-layout')
const { serializeEntry } = require('../access-entry')
const path = require('node:path')
const { createJournal, formatRecord, journalFiles, parseRecord, readRecords } = require('./journal')
const { createRecordEncoder, lineText } = require('./journal/record-bytes')
const { DEFAULTS, resolveSinkOptions } = require('./options')
const { Ledger } = require('./ledger')
const { leftOnDisk } = require('./left-on-disk')
const { SettleBarrier } = require('./settle-barrier')
const { WalGuard } = require('./wal-guard')
const { Batcher } = require('./batcher')

/** @typedef {import('./journal/wal').Segment} Segment */
const { Health } = require('./health')
const { Replayer } = require('./replayer')
const { settleBy, TIMED_OUT } = require('../../lib/deadline')

// close(): the share of its budget spent writing to HBase (the live queue, then every journal
// file); the rest closes the journal and counts what stays on disk.
const CLOSE_WRITE_SHARE = 0.7

/**
 * The HBase access-log sink: write() queues and never waits on HBase; the batcher
 * (batcher.js) sends batches in multiPuts; whatever cannot reach HBase goes to the spill
 * journal (../journal.js), and the replayer (replayer.js) writes it back when HBase answers,
 * orphan journals of dead writers included. Nothing is dropped silently: past `maxQueue`
 * entries in memory, 'spill' journals new entries and 'shed' drops them, counted in `shed`.
 *
 * Row keys (../access-log-layout.js): salt bucket (rotating, so buckets fill evenly) + 13-digit
 * entry time + `${writerId}-${seq}`, fixed when the entry is accepted and kept in the journal,
 * so a repeated write (a replay after a timeout that did land) overwrites the same row.
 *
 * Durability (`durability`, docs/access-log.md "Durability"): 'process', the default, also
 * appends the entry to a write-ahead log (wal-guard.js), written with the other entries of its
 * event-loop turn in one write(2) before their answers go out (the group commit), so it
 * survives a crash of this process; 'host' adds an fdatasync per group, for a power loss;
 * 'memory' keeps no log: entries in memory when the process is killed are lost. A graceful stop
 * or an HBase outage loses nothing in any mode.
 *
 * A stop leaves nothing on disk while HBase answers: close() writes the live queue, then
 * replays every journal file of this writer and those of writers that died (a killed worker's
 * write-ahead log), and deletes them. What HBase could not take within the budget stays in
 * files, counted and named in close()'s answer, in the app log and in stats().leftOnDisk.
 *
 * Accounting (ledger.js), exact at every instant (stats()): accepted + claimed == written +
 * pending + journalBuffered + journalPending + shed + corrupt. claimed: adopted from the files
 * of dead writers; pending: in memory on the live path (at most maxQueue); journalBuffered: in
 * memory, waiting for the journal's disk (at most journalMaxBuffered, default 50,000);
 * journalPending: in journal files on disk; shed: dropped and counted, by reason in shedBy
 * (overload: the 'shed' policy; disk_full / write_error: the journal could not take them, its
 * disk is full or failing; write_backlog: the journal's disk is slower than the entries come);
 * corrupt: lines of damaged journal files that could not be replayed (the files are
 * quarantined). Writes after close are counted in rejectedAfterClose, never accepted.
 *
 * @param {object} options see options.js (DEFAULTS); required: client, table, journalDir
 *   (absolute), writerId (unique among writers sharing the table and journalDir)
 */
function createHBaseSink (options) {
  const opts = resolveSinkOptions(options)
  const { clock, logger } = opts
  const ledger = new Ledger({ strict: opts.strictLedger })
  const journal = createJournal({
    dir: opts.journalDir,
    writerId: opts.writerId,
    maxFileBytes: opts.journalFileBytes,
    maxBufferedLines: opts.journalMaxBuffered,
    maxBytes: opts.journalMaxBytes,
    retryMs: opts.journalRetryMs,
    claimLiveFiles: opts.claimLiveFiles,
    ...(opts.journalFs ? { fs: opts.journalFs } : {}),
    logger
  })
  const durable = opts.durability !== 'memory'
  const walGuard = durable
    ? new WalGuard({
      keepBytes: opts.journalMaxBytes,
      dir: opts.journalDir,
      writerId: opts.writerId + '-wal',
      journal,
      ledger,
      logger,
      sync: opts.durability === 'host',
      fs: opts.walFs
    })
    : null
  const { groupCommit } = opts
  const encodeRecord = createRecordEncoder()
  const barrier = new SettleBarrier()
  const health = new Health()
  const batcher = new Batcher({
    opts,
    ledger,
    spill,
    delivered (item) {
      ledger.writtenLive(1)
      if (walGuard) walGuard.done(item.wal)
      barrier.settle(item.gen)
    },
    health,
    healthy: () => replayer.healthy()
  })
  const replayer = new Replayer({ opts, journal, ledger, batcher, health })
  health.listen({
    down (err) {
      if (logger) {
        logger.warn({ table: opts.table, code: err && err.code },
          'HBase access log: HBase is not answering; spilling to the journal')
      }
      replayer.schedule(replayer.backoff)
    },
    up () {
      replayer.resetBackoff()
      if (logger) {
        logger.info({ table: opts.table, journaled: ledger.journaled },
          'HBase access log: HBase answers again; replaying the journal')
      }
    }
  })
  let seq = 0
  /** @type {Promise<{ leftOnDisk: { entries: number, files: Array<{ file: string, entries: number }> },
   *   lostInMemory: number }>|null} */
  let closing = null
  /** @type {{ entries: number, files: Array<{ file: string, entries: number }> }} */
  let left = { entries: 0, files: [] }

  /**
   * A pending entry goes to the journal, or is shed when the journal cannot take it.
   * @param {string} line its record (journal/files.js formatRecord), without a newline
   * @param {Segment|null} segment its write-ahead-log segment, or null
   * @param {boolean} [unconfirmed] a write of it may have reached HBase
   */
  function toJournal (line, segment, unconfirmed = false) {
    if (!journal.append(line)) {
      const reason = journal.refusalReason()
      // A disk that fails the journal, or is slower than it: the entry's record in the
      // write-ahead log is the journal of last resort, within the journal's budget.
      if (reason !== 'journal_full' && walGuard && walGuard.keep(segment)) ledger.shedOne(reason, unconfirmed, true)
      else shed(reason, segment, unconfirmed)
      return
    }
    ledger.spill()
    if (walGuard) walGuard.afterJournal(segment)
    replayer.schedule(health.down ? replayer.backoff : opts.flushIntervalMs)
  }

  /**
   * Drops one entry, counted by reason. Its write-ahead-log record is released: a replay must
   * not bring back an entry counted as shed.
   * @param {string} reason one of SHED_REASONS
   * @param {Segment|null} segment
   * @param {boolean} [unconfirmed] a write of it may have reached HBase
   */
  function shed (reason, segment, unconfirmed = false) {
    ledger.shedOne(reason, unconfirmed)
    if (walGuard) walGuard.done(segment)
  }

  /** @param {import('./batcher').Item} item */
  function spill (item) {
    if (item.spilled) return
    item.spilled = true
    toJournal(lineText(item.line), item.wal, item.unconfirmed === true)
    barrier.settle(item.gen)
  }

  /**
   * Accepts one entry. Synchronous, never throws, no I/O on the caller's stack (but the
   * write-ahead log's append in durable mode).
   * @param {import('../access-entry').AccessEntry} entry
   */
  function write (entry) {
    if (closing) {
      ledger.rejectAfterClose()
      return
    }
    let value
    try {
      value = serializeEntry(entry)
    } catch {
      ledger.rejectInvalid() // counted, never thrown
      return
    }
    ledger.accept()
    const n = seq++
    const ts = entry && typeof entry.ts === 'number' && entry.ts >= 0 && entry.ts < 1e13
      ? Math.floor(entry.ts)
      : clock.now()
    const key = accessLogRowKey(n % opts.buckets, ts, opts.writerId + '-' + n)
    // Encoded once: the write-ahead log stores these bytes and the put sends views of them.
    const line = walGuard ? encodeRecord(key, value) : null
    const segment = walGuard ? walGuard.stage(/** @type {Buffer} */ (line)) : null
    if (segment !== null) {
      // Written with the rest of this turn's entries, before their answers; else now.
      if (groupCommit) groupCommit.enlist(/** @type {WalGuard} */ (walGuard))
      else /** @type {WalGuard} */ (walGuard).commit()
    }
    if (health.down && opts.overload === 'spill') {
      toJournal(formatRecord(key, value), segment)
      return
    }
    if (batcher.pending >= opts.maxQueue) {
      if (opts.overload === 'shed') {
        shed('overload', segment)
        return
      }
      toJournal(formatRecord(key, value), segment)
      return
    }
    batcher.push({
      key,
      line: line ?? encodeRecord(key, value),
      at: clock.now(),
      firstTry: null,
      attempts: 0,
      retryAt: 0,
      gen: barrier.admit(),
      spilled: false,
      wal: segment
    })
  }

  /**
   * Resolves once every entry accepted so far is acknowledged by HBase or on disk in the
   * journal. Partial batches go out now; entries waiting for a retry are retried now.
   * @returns {Promise<void>}
   */
  async function flush () {
    await batcher.forceWhile(barrier.settled())
    await journal.flush()
    if (opts.rollupMarker) await opts.rollupMarker.flush(opts.writeTimeoutMs || undefined)
  }

  /**
   * Within one budget of `timeoutMs`: for up to 70% of it, writes what is held in memory to
   * HBase, then replays every journal file (this writer's, the ones it claimed, and those of
   * writers that died and were not claimed yet) and deletes them; in the rest, stops the
   * replayer, closes the journal and counts what is left on disk. Idempotent; never rejects.
   * @param {{ timeoutMs?: number }} [budget] default closeTimeoutMs
   * @returns {Promise<{ leftOnDisk: { entries: number, files: Array<{ file: string, entries: number }> },
   *   lostInMemory: number }>} what stays in this writer's files for a later replay (a restart on
   *   this state dir, or `beacon journal replay`), and what was in memory only and is lost
   */
  function close ({ timeoutMs = opts.closeTimeoutMs } = {}) {
    if (closing) return closing
    const deadline = Date.now() + timeoutMs
    const sendBy = Date.now() + Math.floor(timeoutMs * CLOSE_WRITE_SHARE)
    closing = (async () => {
      replayer.halt()
      try {
        await settleBy(flush(), sendBy)
      } catch (err) {
        ledger.error(errorCode(err))
      }
      for (const item of batcher.takeAll()) spill(item)
      await settleBy(replayer.drain(sendBy), sendBy)
      await settleBy(replayer.stop(), deadline)
      await closeJournal(deadline)
      if (opts.rollupMarker) opts.rollupMarker.close()
      left = await leftOnDisk(journal.dir, journal.ownPrefix(), opts.journalFs)
      if (left.entries > 0 && logger) {
        logger.error({ entries: left.entries, files: left.files, journaled: ledger.journaled },
          'HBase access log: entries left on this host\'s disk at close; ' +
          'replay them with a restart on this state dir or `beacon journal replay`')
      }
      return { leftOnDisk: left, lostInMemory: ledger.lostInMemory }
    })()
    return closing
  }

  /** @param {number} deadline */
  async function closeJournal (deadline) {
    try {
      // A disk that refuses writes must not hang shutdown: the journal gets what is left.
      if (await settleBy(journal.close(), deadline) === TIMED_OUT) throw new Error('journal close timed out')
      // Every entry is in HBase or in the closed journal: the write-ahead log is redundant.
      if (walGuard) await walGuard.close({ discard: true })
    } catch (err) {
      if (walGuard) await walGuard.close({ discard: false }) // kept: the next sink to start replays it
      ledger.error(errorCode(err))
      const lost = await lostWithProcess(journal.heldLines())
      journal.abandonHeld() // the rest are records of write-ahead-log files left on disk
      if (lost > 0) ledger.lostAtClose(lost)
      if (logger) {
        logger.error({ err, journalBuffered: journal.bufferedLines(), lostInMemory: lost },
          'HBase access log: journal could not be closed cleanly; ' +
          (lost > 0 ? 'entries in memory that no file holds are lost' : 'the write-ahead log holds what it kept in memory'))
      }
    }
  }

  /**
   * @param {string[]} held journal lines in memory when the journal could not take them
   * @returns {Promise<number>} those no write-ahead-log file kept on disk holds
   */
  async function lostWithProcess (held) {
    if (!walGuard || held.length === 0) return held.length
    const kept = new Set()
    const walPrefix = journal.ownPrefix() + 'wal-'
    for (const file of journalFiles(journal.dir)) {
      if (!path.basename(file).startsWith(walPrefix)) continue
      for (const record of (await readRecords(file).catch(() => ({ records: [] }))).records) kept.add(record.key)
    }
    let lost = 0
    for (const line of held) {
      const record = parseRecord(line)
      if (!record || !kept.has(record.key)) lost++
    }
    return lost
  }

  /**
   * Runs a replay pass now (after the orphan claim); resolves true when the journal is empty.
   * @returns {Promise<boolean>}
   */
  async function replay () {
    await replayer.started
    if (closing) return ledger.journaled === 0
    return replayer.runNow()
  }

  function stats () {
    const oldest = batcher.oldestAt()
    const { journaled, shedBy, ...rest } = ledger.snapshot()
    const buffered = journal.bufferedLines()
    const journalStats = journal.stats()
    return {
      ...rest,
      shedBy,
      leftOnDisk: left.entries,
      journalBuffered: buffered,
      journalPending: journaled - buffered,
      // The disk refuses the journal's writes and entries wait in memory: the errno code.
      writeFailing: journalStats.failing,
      quarantinedFiles: journalStats.quarantined,
      queueDepth: batcher.queueDepth, // pending = queueDepth + inFlight
      inFlight: batcher.inFlightEntries,
      oldestPendingMs: oldest === Infinity ? 0 : Math.max(0, clock.now() - oldest),
      state: health.state,
      durable,
      durability: opts.durability,
      walFailing: walGuard ? walGuard.failing() : null,
      ...(walGuard ? walGuard.stats() : {}),
      ...(opts.rollupMarker ? { rollup: opts.rollupMarker.stats() } : {})
    }
  }

  return {
    type: /** @type {'hbase'} */ ('hbase'),
    table: opts.table,
    maxQueue: opts.maxQueue,
    overload: opts.overload,
    durable,
    write,
    flush,
    close,
    stats,
    replay,
    ready: replayer.started
  }
}

/**
 * What the ledger records of a caught error: its code, else its message.
 * @param {unknown} err
 * @returns {string}
 */
function errorCode (err) {
  const e = /** @type {NodeJS.ErrnoException} */ (err)
  return e.code || e.message
}

module.exports = { createHBaseSink, DEFAULTS }
