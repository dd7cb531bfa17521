'use strict'

/**
 * K-way merge of sorted async sources: yields every item of every source, smallest first, while
 * holding one item per source (a binary min-heap of the sources' heads). The sources are
 * started together (their first `next()` calls run in parallel) and each is advanced only when
 * its head was yielded.
 *
 * Ending the loop early, or a source failing, closes every source (`return()`), and the
 * generator finishes only once they all have: for scans, no server-side scanner is left open.
 */

/**
 * @template T
 * @typedef {{ value: T, source: number }} Head
 */

/**
 * @template T
 * @param {Array<Head<T>>} heap
 * @param {(a: Head<T>, b: Head<T>) => number} less
 * @param {number} i
 */
function siftDown (heap, less, i) {
  const n = heap.length
  for (;;) {
    const left = 2 * i + 1
    const right = left + 1
    let smallest = i
    if (left < n && less(heap[left], heap[smallest]) < 0) smallest = left
    if (right < n && less(heap[right], heap[smallest]) < 0) smallest = right
    if (smallest === i) return
    const swap = heap[i]
    heap[i] = heap[smallest]
    heap[smallest] = swap
    i = smallest
  }
}

/**
 * Merges sources that each yield in ascending `compare` order. Items that compare equal come
 * out in the order of their sources.
 * @template T
 * @param {Array<AsyncIterable<T>>} sources
 * @param {(a: T, b: T) => number} compare
 * @returns {AsyncGenerator<T, void, void>}
 */
async function * mergeSorted (sources, compare) {
  const iterators = sources.map((s) => s[Symbol.asyncIterator]())
  /** @type {(a: Head<T>, b: Head<T>) => number} */
  const less = (a, b) => compare(a.value, b.value) || a.source - b.source
  /** @type {Array<Head<T>>} */
  const heap = []
  try {
    const firsts = await Promise.all(iterators.map((it) => it.next()))
    firsts.forEach((first, source) => { if (!first.done) heap.push({ value: first.value, source }) })
    for (let i = (heap.length >> 1) - 1; i >= 0; i--) siftDown(heap, less, i)
    while (heap.length > 0) {
      const top = heap[0]
      yield top.value
      const next = await iterators[top.source].next()
      if (next.done) {
        const last = /** @type {Head<T>} */ (heap.pop())
        if (heap.length === 0) break
        heap[0] = last
      } else {
        top.value = next.value
      }
      siftDown(heap, less, 0)
    }
  } finally {
    await Promise.allSettled(iterators.map((it) => (typeof it.return === 'function' ? it.return() : undefined)))
  }
}

module.exports = { mergeSorted }
