'use strict'
// A lane's failures, kept from its output so that test/lanes.js can print them again at the very
// end: a lane that fails early in a 15-minute run would otherwise leave its failures thousands
// of lines above the last lines a CI log shows.

/** Lines kept after each failure header: the assertion and the first lines of its stack. */
const LINES_PER_FAILURE = 12

class FailureDigest {
  /** @param {{ maxLines?: number }} [opts] the digest's cap, headers included */
  constructor (opts = {}) {
    this.maxLines = opts.maxLines ?? 80
    /** @type {string[]} */
    this.lines = []
    this.dropped = 0
    this.following = 0
    this.inSummary = false
  }

  /**
   * One line of jest's output (without a lane's tag).
   * @param {string} line
   * @returns {void}
   */
  add (line) {
    // jest's closing summary repeats the failures already kept
    if (/^Summary of all failing tests/.test(line)) this.inSummary = true
    else if (/^Test Suites: /.test(line)) this.inSummary = false
    if (this.inSummary) return
    if (/^\s+● Console\s*$/.test(line)) {
      this.following = 0
    } else if (/^FAIL /.test(line)) {
      this.following = 0
      this.keep(line)
    } else if (/^\s+● /.test(line)) {
      this.following = LINES_PER_FAILURE
      this.keep(line)
    } else if (/^\S/.test(line)) {
      this.following = 0 // a failure's lines are indented: the next file or jest's own lines end them
    } else if (this.following > 0 && line.trim() !== '') {
      this.following--
      this.keep(line)
    }
  }

  /** @param {string} line */
  keep (line) {
    if (this.lines.length < this.maxLines) this.lines.push(line)
    else this.dropped++
  }

  /** @returns {string[]} the digest, with a last line naming what the cap left out */
  report () {
    return this.dropped ? [...this.lines, `(${this.dropped} more lines above)`] : [...this.lines]
  }
}

module.exports = { FailureDigest }
