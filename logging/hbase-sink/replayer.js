'use strict'

const { readRecords, FILE_PATTERN } = require('../journal')
const { toPut } = require('./batcher')

/**
 * Writes journal files back into HBase in the background and deletes each file once all its
 * entries were acknowledged. After an outage the first write is a small probe; failures back
 * off up to `replayMaxBackoffMs`. Live entries come first: a pass stops while the live queue is
 * more than half full. Orphan journals (and write-ahead logs) of writers that no longer run are
 * claimed at start and every `claimIntervalMs`: that is how a crashed worker's entries survive.
 */
class Replayer {
  /**
   * @param {object} deps
   * @param {Readonly<import('./options').SinkOptions>} deps.opts
   * @param {ReturnType<typeof import('../journal').createJournal>} deps.journal
   * @param {ReturnType<typeof import('./options').createCounters>} deps.counters
   * @param {import('./batcher').Batcher} deps.batcher its up/down state and live load
   */
  constructor ({ opts, journal, counters, batcher }) {
    this.opts = opts
    this.journal = journal
    this.counters = counters
    this.batcher = batcher
    /** @type {number} */
    this.backoff = opts.replayBaseMs
    this.timer = null
    /** @type {Promise<boolean>|null} the pass running now */
    this.running = null
    this.stopped = false
    this.started = this.claimOrphans().catch((err) => {
      counters.lastError = err.code || err.message
      if (opts.logger) opts.logger.error({ err }, 'HBase access log: could not claim orphan journals')
    })
    this.claimTimer = setInterval(() => { if (!this.stopped) this.claimOrphans().catch(() => {}) }, opts.claimIntervalMs)
    this.claimTimer.unref()
  }

  /** HBase answers again: the next outage starts from the base backoff. */
  resetBackoff () {
    this.backoff = this.opts.replayBaseMs
  }

  /** @param {number} delay ms */
  schedule (delay) {
    if (this.timer || this.running || this.stopped) return
    this.timer = setTimeout(() => {
      this.timer = null
      this.run()
    }, delay)
    this.timer.unref()
  }

  /** @returns {Promise<boolean>} true when the journal is empty */
  run () {
    if (this.running) return this.running
    const again = (done) => {
      this.running = null
      if (done) {
        this.backoff = this.opts.replayBaseMs
        if (this.counters.journalPending > 0) this.schedule(this.opts.flushIntervalMs)
      } else {
        this.backoff = Math.min(this.opts.replayMaxBackoffMs, this.backoff * 2)
        this.schedule(this.backoff)
      }
      return done
    }
    this.running = this.pass().then(again, (err) => {
      this.counters.lastError = err.code || err.message
      if (this.opts.logger) this.opts.logger.error({ err }, 'HBase access log: journal replay failed')
      return again(false)
    })
    return this.running
  }

  /** Stops scheduling; a pass in flight ends at its next step. */
  stop () {
    this.stopped = true
    clearInterval(this.claimTimer)
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
  }

  /** Replays journal files until none is left (true) or a write fails (false). */
  async pass () {
    await this.started
    const { journal, batcher, opts } = this
    for (;;) {
      if (this.stopped) return false
      if (batcher.state === 'up' && batcher.pending > opts.maxQueue / 2) return false
      let file = journal.nextSealed()
      if (!file) {
        if (journal.unsealedLines() === 0) return true
        await journal.seal()
        file = journal.nextSealed()
        if (!file) return true
      }
      if (!(await this.replayFile(file))) return false
    }
  }

  /** @param {any} file a sealed journal file (journal.nextSealed()) */
  async replayFile (file) {
    const { journal, batcher, counters, opts } = this
    if (!file.records && !(await this.load(file))) return true
    while (file.pos < file.records.length) {
      if (this.stopped) return false
      const size = batcher.state === 'down' ? opts.probeSize : opts.batchSize
      const chunk = file.records.slice(file.pos, file.pos + size)
      let results
      try {
        results = await opts.client.multiPut(opts.table, chunk.map(toPut), { timeout: opts.writeTimeoutMs || undefined })
      } catch (err) {
        results = chunk.map(() => err)
      }
      counters.batches++
      const failures = chunk.filter((_, i) => results[i])
      const firstError = results.find(Boolean)
      const acked = chunk.length - failures.length
      counters.written += acked
      counters.replayed += acked
      counters.journalPending -= acked
      if (acked > 0) batcher.markUp()
      if (failures.length) {
        counters.lastError = firstError.code || 'ERROR'
        if (acked === 0 && firstError.retryable && opts.overload === 'spill') batcher.markDown(firstError)
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

  /**
   * Reads a file's records; lines cut short by a crash are counted as corrupt.
   * @returns {Promise<boolean>} false when the file vanished (its entries are counted lost)
   */
  async load (file) {
    const { counters, opts } = this
    let read
    try {
      read = await readRecords(file.path)
    } catch (err) {
      if (err.code !== 'ENOENT') throw err
      // Deleted behind our back: its entries are gone; say so rather than retry forever.
      counters.corrupt += file.lines
      counters.journalPending -= file.lines
      if (opts.logger) opts.logger.error({ file: file.path, lines: file.lines }, 'HBase access log: journal file vanished before replay')
      await this.journal.remove(file)
      return false
    }
    file.records = read.records
    file.pos = 0
    if (read.corrupt) {
      counters.corrupt += read.corrupt
      counters.journalPending -= read.corrupt
      if (opts.logger) opts.logger.warn({ file: file.path, lines: read.corrupt }, 'HBase access log: journal lines cut short (crashed writer); skipped')
    }
    return true
  }

  async claimOrphans () {
    const files = await this.journal.claimOrphans()
    let lines = 0
    for (const f of files) {
      lines += f.lines
      const m = FILE_PATTERN.exec(f.from)
      if (m && m[2].endsWith('-wal')) this.counters.claimedFromWal += f.lines
    }
    if (lines) {
      this.counters.claimed += lines
      this.counters.journalPending += lines
      if (this.opts.logger) this.opts.logger.info({ files: files.map((f) => f.from), entries: lines }, 'HBase access log: claimed orphan journals')
      this.schedule(0)
    }
  }
}

module.exports = { Replayer }
