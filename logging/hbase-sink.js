'use strict'

const { ACCESS_LOG_FAMILY, ACCESS_LOG_QUALIFIER, bucketPrefix } = require('./access-log-layout')
const { serializeEntry } = require('./access-entry')
const { createJournal, formatRecord, readRecords, FILE_PATTERN } = require('./journal')
const { createWal } = require('./wal')

const DEFAULTS = Object.freeze({
  buckets: 16,
  batchSize: 500,
  flushIntervalMs: 100,
  maxQueue: 50000,
  overload: 'spill',
  durable: false, // write-ahead log every entry before the request is answered (logging/wal.js)
  retryMaxMs: 30000,
  maxInFlight: 3, // live batches in flight at once
  writeTimeoutMs: 0, // per multiPut; 0 = the client's operationTimeout
  closeTimeoutMs: 5000, // close(): time to write the queue to HBase before spilling the rest
  retryBaseMs: 100,
  retryMaxBackoffMs: 5000,
  replayBaseMs: 500, // first wait before replaying the journal after a spill
  replayMaxBackoffMs: 30000,
  probeSize: 10, // entries in the first replay write after HBase was down
  claimIntervalMs: 60000, // how often to look for orphan journals besides at start
  journalFileBytes: 16 * 1024 * 1024
})

/**
 * The HBase access-log sink. write() queues; batches of up to `batchSize` go out in one
 * multiPut when the batch is full or `flushIntervalMs` after its oldest entry, up to
 * `maxInFlight` at a time. The request thread never waits on HBase.
 *
 * Nothing is dropped silently. Per-entry failures that may pass (a region moving) are retried
 * with backoff for up to `retryMaxMs`, then spilled to the journal (logging/journal.js);
 * failures that will not pass (no such table/family) are spilled at once and counted in
 * `failed`. A batch that fails as a whole with a retryable error means HBase is down: with
 * `overload: 'spill'` the sink switches to the journal (queue included) until a replay write
 * succeeds. Past `maxQueue` entries in memory, 'spill' journals new entries and 'shed' drops
 * them, counted in `shed`.
 *
 * A background replayer writes journal files back into HBase (a small probe write first
 * after an outage) and deletes each file once all its entries were acknowledged. On start,
 * and every `claimIntervalMs`, journals left by writers that no longer run are claimed and
 * replayed: that is how the entries of a crashed worker survive.
 *
 * Row keys come from lib/tables: salt bucket (rotating, so buckets fill evenly) + 13-digit
 * entry time + `${writerId}-${seq}`. The key is fixed when the entry is accepted and kept in
 * the journal, so a repeated write (a replay after a timeout that did land) overwrites the
 * same row instead of adding one.
 *
 * Durable mode (`durable: true`): write() also appends the entry to a write-ahead log with a
 * synchronous write(2), so the entry survives a crash of this process once write() returned
 * (the data plane calls it before answering). Segments are deleted as their entries reach
 * HBase or the (flushed) spill journal; a dead writer's segments are claimed and replayed like
 * its journal. Default mode: entries in memory (queue, in flight) when the process is killed
 * are lost; everything else (graceful stop, HBase down) is still journaled and replayed.
 *
 * Accounting, once quiescent: accepted + claimed == written + pending + journalPending + shed
 * + corrupt (claimed: entries adopted from orphan journals; corrupt: journal lines cut short
 * by a crash). Writes after close are counted in rejectedAfterClose, never accepted.
 *
 * @param {object} options
 * @param {import('../lib/hbase').HBaseClient} options.client
 * @param {string} options.table
 * @param {string} options.journalDir absolute
 * @param {string} options.writerId unique among writers sharing the table and journalDir
 * @param {number} [options.buckets]
 * @param {number} [options.batchSize]
 * @param {number} [options.flushIntervalMs]
 * @param {number} [options.maxQueue] entries held in memory (queued, in flight, awaiting retry)
 * @param {'spill'|'shed'} [options.overload]
 * @param {boolean} [options.durable] write-ahead log before acknowledging (see above)
 * @param {number} [options.retryMaxMs] retry budget of one entry before it is spilled
 * @param {{ now(): number }} [options.clock] time source for ages, budgets and backoff
 * @param {{ info: Function, warn: Function, error: Function }} [options.logger]
 */
function createHBaseSink (options) {
  const opts = validate({ ...DEFAULTS, ...options })
  const { client, table, clock, logger } = opts
  const writeTimeout = opts.writeTimeoutMs || undefined
  const journal = createJournal({ dir: opts.journalDir, writerId: opts.writerId, maxFileBytes: opts.journalFileBytes, logger })
  const wal = opts.durable ? createWal({ dir: opts.journalDir, writerId: opts.writerId + '-wal' }) : null

  // Counters (see stats()).
  let accepted = 0
  let written = 0
  let spilled = 0
  let replayed = 0
  let journalPending = 0
  let shed = 0
  let failed = 0
  let rejectedAfterClose = 0
  let invalid = 0
  let claimed = 0
  let corrupt = 0
  let claimedFromWal = 0
  let walFailures = 0 // entries the write-ahead log could not take (disk error): not durable
  let lastWalWarn = 0
  let walAwaitingJournal = [] // WAL segments of spilled entries, released once the journal is flushed
  let walFlushing = false
  let walUnsafe = false // a release was abandoned: keep the WAL files at close
  let batches = 0
  let lastError = null

  let seq = 0
  // 'down' (spill mode only): a whole batch failed retryably; live entries go to the journal
  // until a replay write succeeds. In shed mode entries stay queued and are retried instead.
  let state = 'up'
  let queue = [] // items waiting to be sent, oldest first
  let retrying = [] // items waiting for their retry time
  let inFlightEntries = 0
  const inFlight = new Set() // batches (arrays of items)
  let flushTimer = null
  let pumpScheduled = false
  let retryTimer = null
  let replayTimer = null
  let replayBackoff = opts.replayBaseMs
  let replaying = null
  let stopReplay = false
  let closing = null
  let forcing = 0 // > 0 while a flush or close wants partial batches sent now
  let settleWaiters = [] // { gen, resolve }
  let gen = 0 // flush generation of new items
  let genCount = 0 // unsettled items of the current generation
  const olderGens = new Map() // earlier generation -> unsettled items

  // --- write path ---------------------------------------------------------------------------

  /**
   * Accepts one entry. Synchronous, never throws, no I/O on the caller's stack.
   * @param {import('./access-entry').AccessEntry} entry
   */
  function write (entry) {
    if (closing) {
      rejectedAfterClose++
      return
    }
    let value
    try {
      value = serializeEntry(entry)
    } catch {
      invalid++ // not serializable (a BigInt, a cycle): counted, never thrown
      return
    }
    accepted++
    const n = seq++
    const ts = entry && typeof entry.ts === 'number' && entry.ts >= 0 && entry.ts < 1e13 ? Math.floor(entry.ts) : clock.now()
    const key = bucketPrefix(n % opts.buckets) + String(ts).padStart(13, '0') + opts.writerId + '-' + n
    const segment = wal ? walAppend(key, value) : null
    if (state === 'down' && opts.overload === 'spill') {
      appendToJournal(key, value, segment)
      return
    }
    if (queue.length + retrying.length + inFlightEntries >= opts.maxQueue) {
      if (opts.overload === 'shed') {
        shed++
        if (segment) wal.done(segment) // counted as shed: a replay must not bring it back
        return
      }
      appendToJournal(key, value, segment)
      return
    }
    queue.push({ key, value, at: clock.now(), firstTry: null, attempts: 0, retryAt: 0, gen, spilled: false, wal: segment })
    genCount++
    if (queue.length >= opts.batchSize) schedulePump()
    else if (!flushTimer) flushTimer = setTimeout(onFlushTimer, opts.flushIntervalMs)
  }

  function walAppend (key, value) {
    try {
      return wal.append(key, value)
    } catch (err) {
      // The entry still goes the normal way; it is only not crash-proof. Counted, logged at
      // most every 5 s (a full disk fails every request).
      walFailures++
      lastError = err.code || err.message
      const now = Date.now()
      if (logger && now - lastWalWarn > 5000) {
        lastWalWarn = now
        logger.error({ err, walFailures }, 'HBase access log: write-ahead log write failed; entry kept in memory only')
      }
      return null
    }
  }

  function schedulePump () {
    if (pumpScheduled) return
    pumpScheduled = true
    setImmediate(() => {
      pumpScheduled = false
      pump()
    })
  }

  function onFlushTimer () {
    flushTimer = null
    pump()
  }

  /** Sends every batch that is due, up to maxInFlight; re-arms the interval timer. */
  function pump () {
    if (state !== 'up') return
    while (queue.length && inFlight.size < opts.maxInFlight) {
      const due = queue.length >= opts.batchSize || forcing > 0 || clock.now() - queue[0].at >= opts.flushIntervalMs
      if (!due) break
      send(queue.splice(0, opts.batchSize))
    }
    if (queue.length && !flushTimer && inFlight.size < opts.maxInFlight) {
      const wait = Math.max(1, Math.min(opts.flushIntervalMs, queue[0].at + opts.flushIntervalMs - clock.now()))
      flushTimer = setTimeout(onFlushTimer, wait)
    }
  }

  async function send (items) {
    const now = clock.now()
    for (const item of items) {
      if (item.firstTry === null) item.firstTry = now
      item.attempts++
    }
    inFlight.add(items)
    inFlightEntries += items.length
    batches++
    let results
    try {
      results = await client.multiPut(table, items.map(toPut), { timeout: writeTimeout })
    } catch (err) {
      results = items.map(() => err) // the call itself failed (client closed, bad argument)
    }
    inFlight.delete(items)
    let ok = 0
    let down = true
    const failures = []
    for (let i = 0; i < items.length; i++) {
      const item = items[i]
      if (item.spilled) continue // close() journaled it while in flight
      inFlightEntries--
      const err = results[i]
      if (!err) {
        ok++
        written++
        if (item.wal) wal.done(item.wal)
        settle(item)
      } else {
        failures.push([item, err])
        if (!err.retryable) down = false
      }
    }
    if (failures.length) {
      lastError = failures[0][1].code || 'ERROR'
      if (ok === 0 && down && opts.overload === 'spill') {
        markDown(failures[0][1])
        for (const [item] of failures) spill(item)
      } else {
        for (const [item, err] of failures) onFailure(item, err)
      }
    }
    pump()
  }

  function onFailure (item, err) {
    if (!err.retryable) {
      failed++
      spill(item)
      return
    }
    const now = clock.now()
    // Down (another batch found out): retrying would only wait for the same HBase.
    if (state === 'down' || now - item.firstTry >= opts.retryMaxMs) {
      spill(item)
      return
    }
    const backoff = Math.min(opts.retryMaxBackoffMs, opts.retryBaseMs * 2 ** (item.attempts - 1))
    item.retryAt = now + backoff * (0.75 + Math.random() * 0.5)
    retrying.push(item)
    armRetryTimer()
  }

  function armRetryTimer () {
    if (retryTimer || retrying.length === 0) return
    let next = Infinity
    for (const item of retrying) if (item.retryAt < next) next = item.retryAt
    retryTimer = setTimeout(onRetryTimer, Math.max(1, next - clock.now()))
  }

  function onRetryTimer () {
    retryTimer = null
    const now = clock.now()
    const due = []
    const later = []
    for (const item of retrying) (forcing > 0 || item.retryAt <= now ? due : later).push(item)
    retrying = later
    if (due.length) queue = due.concat(queue) // (a spread could exceed the argument limit)
    armRetryTimer()
    pump()
  }

  function toPut (item) {
    return { row: item.key, cells: { [ACCESS_LOG_FAMILY]: { [ACCESS_LOG_QUALIFIER]: item.value } } }
  }

  // --- spilling, settling -------------------------------------------------------------------

  function appendToJournal (key, value, segment) {
    journal.append(formatRecord(key, value))
    spilled++
    journalPending++
    if (segment) releaseAfterJournal(segment)
    scheduleReplay(state === 'down' ? replayBackoff : opts.flushIntervalMs)
  }

  function spill (item) {
    if (item.spilled) return
    item.spilled = true
    appendToJournal(item.key, item.value, item.wal)
    settle(item)
  }

  /** The WAL keeps a spilled entry until the journal's own write of it is on disk. */
  function releaseAfterJournal (segment) {
    walAwaitingJournal.push(segment)
    if (walFlushing) return
    walFlushing = true
    setImmediate(async () => {
      while (walAwaitingJournal.length) {
        const batch = walAwaitingJournal
        walAwaitingJournal = []
        try {
          await journal.flush()
          for (const s of batch) wal.done(s)
        } catch {
          walUnsafe = true // the journal cannot write: the WAL files stay for a later claim
        }
      }
      walFlushing = false
    })
  }

  /** The item is written or journaled: flush() waiters of its generation may be done. */
  function settle (item) {
    if (item.gen === gen) {
      genCount--
    } else {
      const left = olderGens.get(item.gen) - 1
      if (left === 0) olderGens.delete(item.gen)
      else olderGens.set(item.gen, left)
    }
    if (settleWaiters.length) checkWaiters()
  }

  function checkWaiters () {
    let oldest = Infinity
    for (const g of olderGens.keys()) if (g < oldest) oldest = g
    if (genCount > 0 && gen < oldest) oldest = gen
    const still = []
    for (const w of settleWaiters) (w.gen < oldest ? w.resolve() : still.push(w))
    settleWaiters = still
  }

  /** Resolves when every item accepted before now is written or journaled. */
  function settled () {
    if (genCount === 0 && olderGens.size === 0) return Promise.resolve()
    if (genCount > 0) olderGens.set(gen, genCount)
    const target = gen
    gen++
    genCount = 0
    return new Promise((resolve) => {
      settleWaiters.push({ gen: target, resolve })
      checkWaiters()
    })
  }

  function markDown (err) {
    if (state === 'down') return
    state = 'down'
    if (logger) logger.warn({ table, code: err && err.code }, 'HBase access log: HBase is not answering; spilling to the journal')
    // Everything held in memory goes to the journal too: it would only wait for the same HBase.
    const held = queue.splice(0, queue.length).concat(retrying)
    retrying = []
    for (const item of held) spill(item)
    scheduleReplay(replayBackoff)
  }

  function markUp () {
    if (state === 'up') return
    state = 'up'
    replayBackoff = opts.replayBaseMs
    if (logger) logger.info({ table, journalPending }, 'HBase access log: HBase answers again; replaying the journal')
    pump()
  }

  // --- replay -------------------------------------------------------------------------------

  function scheduleReplay (delay) {
    if (replayTimer || replaying || stopReplay) return
    replayTimer = setTimeout(() => {
      replayTimer = null
      runReplay()
    }, delay)
    replayTimer.unref()
  }

  function runReplay () {
    if (replaying) return replaying
    replaying = replayPass().then((done) => {
      replaying = null
      if (done) {
        replayBackoff = opts.replayBaseMs
        if (journalPending > 0) scheduleReplay(opts.flushIntervalMs)
      } else {
        replayBackoff = Math.min(opts.replayMaxBackoffMs, replayBackoff * 2)
        scheduleReplay(replayBackoff)
      }
      return done
    }, (err) => {
      replaying = null
      lastError = err.code || err.message
      if (logger) logger.error({ err }, 'HBase access log: journal replay failed')
      replayBackoff = Math.min(opts.replayMaxBackoffMs, replayBackoff * 2)
      scheduleReplay(replayBackoff)
      return false
    })
    return replaying
  }

  /** Replays journal files until none is left (true) or a write fails (false). */
  async function replayPass () {
    await started
    for (;;) {
      if (stopReplay) return false
      // Live entries first: replay only while the live queue has room.
      if (state === 'up' && queue.length + retrying.length + inFlightEntries > opts.maxQueue / 2) return false
      let file = journal.nextSealed()
      if (!file) {
        if (journal.unsealedLines() === 0) return true
        await journal.seal()
        file = journal.nextSealed()
        if (!file) return true
      }
      if (!(await replayFile(file))) return false
    }
  }

  async function replayFile (file) {
    if (!file.records) {
      let read
      try {
        read = await readRecords(file.path)
      } catch (err) {
        if (err.code !== 'ENOENT') throw err
        // Deleted behind our back: its entries are gone; say so rather than retry forever.
        corrupt += file.lines
        journalPending -= file.lines
        if (logger) logger.error({ file: file.path, lines: file.lines }, 'HBase access log: journal file vanished before replay')
        await journal.remove(file)
        return true
      }
      const { records, corrupt: bad } = read
      file.records = records
      file.pos = 0
      if (bad) {
        corrupt += bad
        journalPending -= bad
        if (logger) logger.warn({ file: file.path, lines: bad }, 'HBase access log: journal lines cut short (crashed writer); skipped')
      }
    }
    while (file.pos < file.records.length) {
      if (stopReplay) return false
      const size = state === 'down' ? opts.probeSize : opts.batchSize
      const chunk = file.records.slice(file.pos, file.pos + size)
      let results
      try {
        results = await client.multiPut(table, chunk.map(toPut), { timeout: writeTimeout })
      } catch (err) {
        results = chunk.map(() => err)
      }
      batches++
      const failures = []
      let firstError = null
      for (let i = 0; i < chunk.length; i++) {
        if (results[i]) {
          failures.push(chunk[i])
          if (!firstError) firstError = results[i]
        }
      }
      const acked = chunk.length - failures.length
      written += acked
      replayed += acked
      journalPending -= acked
      if (acked > 0) markUp()
      if (failures.length) {
        lastError = firstError.code || 'ERROR'
        if (acked === 0 && firstError.retryable && opts.overload === 'spill') markDown(firstError)
        // Keep the failed ones at the front; they are tried again after a backoff.
        file.records = failures.concat(file.records.slice(file.pos + chunk.length))
        file.pos = 0
        return false
      }
      file.pos += chunk.length
    }
    file.records = null
    await journal.remove(file)
    return true
  }

  async function claimOrphans () {
    const files = await journal.claimOrphans()
    let lines = 0
    for (const f of files) {
      lines += f.lines
      const m = FILE_PATTERN.exec(f.from)
      if (m && m[2].endsWith('-wal')) claimedFromWal += f.lines
    }
    if (lines) {
      claimed += lines
      journalPending += lines
      if (logger) logger.info({ files: files.map((f) => f.from), entries: lines }, 'HBase access log: claimed orphan journals')
      scheduleReplay(0)
    }
  }

  const started = claimOrphans().catch((err) => {
    lastError = err.code || err.message
    if (logger) logger.error({ err }, 'HBase access log: could not claim orphan journals')
  })
  const claimTimer = setInterval(() => {
    if (!closing) claimOrphans().catch(() => {})
  }, opts.claimIntervalMs)
  claimTimer.unref()

  // --- flush, close, stats ------------------------------------------------------------------

  /**
   * Resolves once every entry accepted so far is acknowledged by HBase or on disk in the
   * journal. Partial batches go out now; entries waiting for a retry are retried now.
   * @returns {Promise<void>}
   */
  async function flush () {
    forcing++
    try {
      if (retrying.length) {
        if (retryTimer) clearTimeout(retryTimer)
        onRetryTimer()
      }
      pump()
      await settled()
      await journal.flush()
    } finally {
      forcing--
    }
  }

  /**
   * Writes what is held in memory to HBase within closeTimeoutMs, journals whatever is left,
   * stops the replayer and closes the journal. Idempotent; never rejects.
   * @returns {Promise<void>}
   */
  function close () {
    if (closing) return closing
    closing = (async () => {
      clearInterval(claimTimer)
      if (replayTimer) clearTimeout(replayTimer)
      replayTimer = null
      stopReplay = true
      let deadlineTimer
      const deadline = new Promise((resolve) => { deadlineTimer = setTimeout(resolve, opts.closeTimeoutMs) })
      try {
        await Promise.race([flush(), deadline])
      } catch (err) {
        lastError = err.code || err.message
      }
      // Whatever is still in memory goes to the journal, in flight included: if that write
      // lands after all, the replay rewrites the same row.
      const left = queue.splice(0, queue.length).concat(retrying)
      retrying = []
      for (const batch of inFlight) {
        for (const item of batch) {
          if (!item.spilled) {
            inFlightEntries--
            left.push(item)
          }
        }
      }
      for (const item of left) spill(item)
      if (flushTimer) clearTimeout(flushTimer)
      if (retryTimer) clearTimeout(retryTimer)
      flushTimer = retryTimer = null
      if (replaying) await Promise.race([replaying, deadline])
      clearTimeout(deadlineTimer)
      // The journal gets its own bound: a disk that refuses writes must not hang shutdown.
      let journalTimer
      const journalDeadline = new Promise((resolve) => { journalTimer = setTimeout(resolve, opts.closeTimeoutMs, 'timeout') })
      try {
        const outcome = await Promise.race([journal.close(), journalDeadline])
        if (outcome === 'timeout') throw new Error('journal close timed out')
        // Every entry is in HBase or in the closed journal: the write-ahead log is redundant.
        if (wal) await wal.close({ discard: !walUnsafe })
      } catch (err) {
        if (wal) await wal.close() // kept: the next sink to start replays it
        lastError = err.code || err.message
        if (logger) logger.error({ err, journalPending }, 'HBase access log: journal could not be closed cleanly; entries may be lost')
      } finally {
        clearTimeout(journalTimer)
      }
    })()
    return closing
  }

  /**
   * Runs a replay pass now (after the orphan claim); resolves true when the journal is empty.
   * @returns {Promise<boolean>}
   */
  async function replay () {
    await started
    if (closing) return journalPending === 0
    if (replayTimer) clearTimeout(replayTimer)
    replayTimer = null
    return runReplay()
  }

  function stats () {
    const now = clock.now()
    let oldest = queue.length ? queue[0].at : Infinity
    for (const item of retrying) if (item.at < oldest) oldest = item.at
    for (const batch of inFlight) if (batch.length && batch[0].at < oldest) oldest = batch[0].at
    const pending = queue.length + retrying.length + inFlightEntries
    return {
      accepted,
      written,
      pending,
      spilled,
      replayed,
      journalPending,
      shed,
      failed,
      rejectedAfterClose,
      queueDepth: pending,
      oldestPendingMs: oldest === Infinity ? 0 : Math.max(0, now - oldest),
      batches,
      lastError,
      claimed,
      claimedFromWal,
      corrupt,
      invalid,
      state,
      durable: Boolean(wal),
      walFailures,
      ...(wal ? wal.stats() : {})
    }
  }

  return { type: 'hbase', table, maxQueue: opts.maxQueue, overload: opts.overload, durable: Boolean(wal), write, flush, close, stats, replay, ready: started }
}

function validate (o) {
  const positiveInt = (name, min = 1) => {
    if (!Number.isInteger(o[name]) || o[name] < min) throw new TypeError(`hbase sink: ${name} must be an integer >= ${min}`)
  }
  if (!o.client || typeof o.client.multiPut !== 'function') throw new TypeError('hbase sink: client must be an HBase client')
  if (typeof o.table !== 'string' || o.table.length === 0) throw new TypeError('hbase sink: table is required')
  if (typeof o.writerId !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(o.writerId)) throw new TypeError('hbase sink: writerId must match [A-Za-z0-9_-]{1,64}')
  if (typeof o.journalDir !== 'string') throw new TypeError('hbase sink: journalDir is required')
  if (o.overload !== 'spill' && o.overload !== 'shed') throw new TypeError("hbase sink: overload must be 'spill' or 'shed'")
  if (typeof o.durable !== 'boolean') throw new TypeError('hbase sink: durable must be a boolean')
  if (o.durable && o.writerId.length > 60) throw new TypeError('hbase sink: writerId must be at most 60 chars in durable mode')
  if (!Number.isInteger(o.buckets) || o.buckets < 1 || o.buckets > 256) throw new TypeError('hbase sink: buckets must be 1..256')
  for (const name of ['batchSize', 'flushIntervalMs', 'maxQueue', 'maxInFlight', 'closeTimeoutMs', 'probeSize', 'claimIntervalMs', 'journalFileBytes']) positiveInt(name)
  for (const name of ['retryMaxMs', 'writeTimeoutMs', 'retryBaseMs', 'retryMaxBackoffMs', 'replayBaseMs', 'replayMaxBackoffMs']) positiveInt(name, 0)
  if (!o.clock) o.clock = Date
  if (typeof o.clock.now !== 'function') throw new TypeError('hbase sink: clock must have now()')
  return Object.freeze(o)
}

module.exports = { createHBaseSink, DEFAULTS }
