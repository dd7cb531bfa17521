'use strict'

/**
 * Reads an async source ahead of its consumer, up to `highWater` items: while the consumer works
 * on what is buffered, the source's next page is already being fetched. In a merge of one scan
 * per salt bucket this is what makes the buckets' scans run in parallel: without it, the merge
 * would wait for each bucket's next page in turn, one RPC at a time.
 *
 * Memory is bounded: at most `highWater` items, plus whatever the source holds itself (one page
 * of a scan). `return()` stops reading, waits for the read in flight, and closes the source.
 * A source's error is delivered after the items read before it.
 * @template T
 * @param {AsyncIterable<T>} source
 * @param {number} highWater items to hold at most (>= 1)
 * @returns {AsyncIterableIterator<T> & { return: () => Promise<IteratorResult<T, void>> }}
 */
function readAhead (source, highWater) {
  const it = source[Symbol.asyncIterator]()
  /** @type {T[]} */
  let queue = []
  let head = 0
  let done = false
  let closed = false
  /** @type {unknown} */
  let error = null
  let failed = false
  /** @type {Promise<void>|null} */
  let reading = null
  /** @type {(() => void)|null} */
  let wake = null

  const buffered = () => queue.length - head
  const notify = () => {
    const w = wake
    wake = null
    if (w) w()
  }

  function fill () {
    if (reading || done || closed) return
    reading = (async () => {
      try {
        // `closed` is set by return() while this loop awaits the source.
        // eslint-disable-next-line no-unmodified-loop-condition
        while (!closed && buffered() < highWater) {
          const next = await it.next()
          if (closed) break
          if (next.done) {
            done = true
            break
          }
          queue.push(next.value)
          notify()
        }
      } catch (err) {
        error = err
        failed = true
        done = true
      } finally {
        reading = null
        notify()
      }
    })()
  }

  /** @returns {T} */
  function take () {
    const value = queue[head++]
    if (head === queue.length) {
      queue = []
      head = 0
    } else if (head >= 1024 && head * 2 >= queue.length) {
      queue = queue.slice(head)
      head = 0
    }
    return value
  }

  return {
    async next () {
      for (;;) {
        if (closed) return { value: undefined, done: true }
        if (buffered() > 0) {
          const value = take()
          fill()
          return { value, done: false }
        }
        if (failed) {
          failed = false
          throw error
        }
        if (done) return { value: undefined, done: true }
        fill()
        await new Promise((resolve) => { wake = () => resolve(undefined) })
      }
    },
    async return () {
      closed = true
      if (reading) await reading
      queue = []
      head = 0
      if (typeof it.return === 'function') await it.return()
      return { value: undefined, done: true }
    },
    [Symbol.asyncIterator] () {
      return this
    }
  }
}

module.exports = { readAhead }
