'use strict'

const { performance } = require('node:perf_hooks')

/** Markers queued behind the data, so that FIN and RST are delayed like the bytes before them. */
const END = Symbol('end')
const DESTROY = Symbol('destroy')

// Node timers have millisecond granularity and fire up to ~1 ms early or late (setTimeout(f, 3.5)
// is setTimeout(f, 3), measured 2.1..3.4 ms here). In precise mode the timer wakes us up to
// SPIN_MS before a release and setImmediate polls the rest of the way: sub-0.1 ms accuracy, paid
// for with a busy event loop while bytes are in flight.
const SPIN_MS = 1
// Timer-only mode releases a chunk when it is due within half a timer tick: unbiased, ±1 ms.
const TIMER_TOLERANCE_MS = 0.5
const COMPACT_AT = 1024

/**
 * One direction of a delayed connection: a FIFO of chunks with release times. Each release time
 * is arrival + delay ± jitter, but never earlier than the previous chunk's, so bytes can never
 * overtake each other (a TCP stream reordered is a corrupted stream), and one timer serves the
 * whole queue (the head's release time).
 */
class DelayLine {
  #dest
  #delayMs
  #jitterMs
  #now
  #random
  #precise
  #onFlush
  #queue = []
  #head = 0
  #bytes = 0
  #last
  #timer = null
  #immediate = null
  #destroyed = false

  /**
   * @param {{ write (chunk: Buffer): boolean, end (): void, destroy (): void, cork? (): void, uncork? (): void, destroyed?: boolean }} dest
   * @param {{ delayMs: number, jitterMs?: number, notBefore?: number, precise?: boolean,
   *   now?: () => number, random?: () => number, onFlush?: () => void }} options
   *   notBefore: no release before this time (on the `now` clock); onFlush: called after releases
   */
  constructor (dest, {
    delayMs, jitterMs = 0, notBefore = -Infinity, precise = true, now = performance.now.bind(performance), random = Math.random,
    onFlush = null
  }) {
    this.#dest = dest
    this.#delayMs = delayMs
    this.#jitterMs = jitterMs
    this.#last = notBefore
    this.#precise = precise
    this.#now = now
    this.#random = random
    this.#onFlush = onFlush
  }

  /**
   * Changes the delay of the chunks pushed from now on (a fault that worsens or heals); chunks
   * already queued keep their release times, and order is kept either way.
   * @param {number} delayMs
   */
  setDelay (delayMs) {
    this.#delayMs = delayMs
  }

  /** Bytes accepted and not yet released. */
  get queuedBytes () {
    return this.#bytes
  }

  /** Whether nothing is waiting to be released. */
  get idle () {
    return this.#head === this.#queue.length
  }

  /** @param {Buffer} chunk */
  push (chunk) {
    this.#bytes += chunk.length
    this.#enqueue(chunk)
  }

  /** Ends the destination (FIN) once everything queued before has been released. */
  end () {
    this.#enqueue(END)
  }

  /** Destroys the destination (RST) once everything queued before has been released. */
  abort () {
    this.#enqueue(DESTROY)
  }

  /** Drops whatever is queued and stops the timer; the destination is left as it is. */
  destroy () {
    this.#destroyed = true
    this.#clearTimers()
    this.#queue = []
    this.#head = 0
    this.#bytes = 0
  }

  #enqueue (item) {
    if (this.#destroyed) return
    const arrival = this.#now()
    const jitter = this.#jitterMs ? (this.#random() * 2 - 1) * this.#jitterMs : 0
    const at = Math.max(arrival + Math.max(this.#delayMs + jitter, 0), this.#last)
    this.#last = at
    this.#queue.push({ item, at })
    // Only a new head needs a new timer; later items are released after it anyway.
    if (this.#queue.length - this.#head === 1) this.#schedule()
  }

  #schedule () {
    if (this.#timer || this.#immediate || this.idle || this.#destroyed) return
    const wait = this.#queue[this.#head].at - this.#now()
    if (wait <= 0) {
      this.#flush()
    } else if (!this.#precise) {
      this.#timer = setTimeout(this.#wake, Math.max(1, Math.round(wait)))
    } else if (wait > SPIN_MS) {
      this.#timer = setTimeout(this.#wake, Math.floor(wait - SPIN_MS))
    } else {
      this.#immediate = setImmediate(this.#wake)
    }
  }

  #wake = () => {
    this.#timer = null
    this.#immediate = null
    this.#flush()
  }

  #flush () {
    const due = this.#now() + (this.#precise ? 0 : TIMER_TOLERANCE_MS)
    const dest = this.#dest
    let corked = false
    while (!this.idle && this.#queue[this.#head].at <= due) {
      const { item } = this.#queue[this.#head]
      this.#queue[this.#head++] = undefined
      if (typeof item !== 'symbol') this.#bytes -= item.length
      if (dest.destroyed) continue
      if (item === END) {
        dest.end()
      } else if (item === DESTROY) {
        dest.destroy()
      } else {
        // Several chunks due at once go out in one write (one segment where possible).
        if (!corked && dest.cork && !this.idle && this.#queue[this.#head].at <= due) {
          dest.cork()
          corked = true
        }
        dest.write(item)
      }
    }
    if (corked) dest.uncork()
    if (this.#head > COMPACT_AT && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head)
      this.#head = 0
    }
    this.#schedule()
    if (this.#onFlush) this.#onFlush()
  }

  #clearTimers () {
    clearTimeout(this.#timer)
    clearImmediate(this.#immediate)
    this.#timer = null
    this.#immediate = null
  }
}

module.exports = { DelayLine }
