'use strict'

const { FILE_PATTERN } = require('./journal/files')

/**
 * Takes over the journal and write-ahead-log files of writers that are gone (journal/index.js
 * claimOrphans): at start, every `intervalMs`, and whenever claim() is called (the close's
 * drain). One claim at a time: a claim asked for while one runs starts after it, so whoever
 * awaits claim() knows every file claimed so far is counted and listed for replay. Each file is
 * counted in the ledger as it is claimed, before a replay can see it.
 */
class OrphanClaims {
  /**
   * @param {object} deps
   * @param {ReturnType<typeof import('./journal').createJournal>} deps.journal
   * @param {import('./ledger').Ledger} deps.ledger
   * @param {number} deps.intervalMs
   * @param {() => void} deps.claimed files were claimed: replay them
   * @param {import('./types').Logger} [deps.logger]
   */
  constructor ({ journal, ledger, intervalMs, claimed, logger }) {
    this.journal = journal
    this.ledger = ledger
    this.claimed = claimed
    this.logger = logger
    /** @type {Promise<void>|null} the claim running now */
    this.running = null
    this.timer = setInterval(() => this.claim().catch(() => {}), intervalMs)
    this.timer.unref()
  }

  /** @returns {Promise<void>} once a claim that began after this call has ended */
  claim () {
    const claim = (this.running || Promise.resolve()).catch(() => {}).then(() => this.claimNow())
    this.running = claim
    const done = () => {
      if (this.running === claim) this.running = null
    }
    claim.then(done, done)
    return claim
  }

  /** No more periodic claims (closing); claim() still works. */
  stop () {
    clearInterval(this.timer)
  }

  async claimNow () {
    /** @param {import('./journal/journal-file').JournalFile} f a file claimed */
    const counted = (f) => {
      const m = FILE_PATTERN.exec(/** @type {string} */ (f.from)) // claimed: it had another writer's name
      this.ledger.claim(f.lines, Boolean(m && m[2].endsWith('-wal')))
    }
    const files = await this.journal.claimOrphans(counted)
    const lines = files.reduce((n, f) => n + f.lines, 0)
    if (!lines) return
    if (this.logger) {
      this.logger.info({ files: files.map((f) => f.from), entries: lines }, 'HBase access log: claimed orphan journals')
    }
    this.claimed()
  }
}

module.exports = { OrphanClaims }
