'use strict'

// A change-stream client for the tests (what EventSource does, minus reconnecting): one GET,
// the response parsed as server-sent events as bytes arrive, each block kept with when it came.

const http = require('node:http')

/**
 * @typedef {{ id?: string, data?: string, event?: string, retry?: string, comment?: string, at: number }} SseBlock
 *   one block (fields up to a blank line); at: performance.now() when its last byte arrived
 */

/**
 * Parses server-sent-event text into blocks (HTML "Server-sent events": a line `field: value`,
 * `:` a comment, a blank line ends a block). Returns the blocks and the unparsed rest.
 * @param {string} text
 * @returns {{ blocks: Array<Record<string, string>>, rest: string }}
 */
function parseSse (text) {
  const blocks = []
  let start = 0
  for (let end = text.indexOf('\n\n'); end >= 0; end = text.indexOf('\n\n', start)) {
    const block = {}
    for (const line of text.slice(start, end).split('\n')) {
      const colon = line.indexOf(':')
      const field = colon < 0 ? line : line.slice(0, colon)
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '')
      block[field === '' ? 'comment' : field] = value
    }
    blocks.push(block)
    start = end + 2
  }
  return { blocks, rest: text.slice(start) }
}

/**
 * Opens a stream. Resolves once the response headers are in (for any status).
 * @param {string} url
 * @param {{ headers?: Record<string, string> }} [options]
 * @returns {Promise<{ status: number, headers: http.IncomingHttpHeaders, blocks: SseBlock[], body: () => string,
 *   ended: Promise<boolean>, next: (test: (b: SseBlock) => boolean, timeoutMs?: number) => Promise<SseBlock>,
 *   find: (test: (b: SseBlock) => boolean, timeoutMs?: number) => Promise<SseBlock>, close: () => void }>}
 *   blocks: every block so far; body: the raw text so far; ended: resolves when the response is
 *   over, true if the server ended it cleanly; next: the first block from now on that
 *   passes `test`; find: the first so far, or else next
 */
function openStream (url, { headers = {}, localAddress } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers, agent: false, ...(localAddress ? { localAddress } : {}) }, (res) => {
      /** @type {SseBlock[]} */
      const blocks = []
      const waiters = new Set()
      let text = ''
      let raw = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => {
        raw += chunk
        const parsed = parseSse(text + chunk)
        text = parsed.rest
        const at = performance.now()
        for (const fields of parsed.blocks) {
          const block = { ...fields, at }
          blocks.push(block)
          for (const w of [...waiters]) if (w.test(block)) w.done(block)
        }
      })
      // true when the server ended the stream (its terminating chunk came), false when cut
      const ended = new Promise((resolve) => res.on('close', () => resolve(res.complete)))
      resolve({
        status: res.statusCode || 0,
        headers: res.headers,
        blocks,
        body: () => raw,
        ended,
        next (test, timeoutMs = 5000) {
          return new Promise((resolve, reject) => {
            const w = {
              test,
              done: (block) => { clearTimeout(timer); waiters.delete(w); resolve(block) }
            }
            const timer = setTimeout(() => { waiters.delete(w); reject(new Error(`no matching event within ${timeoutMs} ms`)) }, timeoutMs)
            waiters.add(w)
          })
        },
        find (test, timeoutMs) {
          const found = blocks.find(test)
          return found ? Promise.resolve(found) : this.next(test, timeoutMs)
        },
        close: () => req.destroy()
      })
    })
    req.on('error', reject)
  })
}

/** Whether a block is a refetchEvaluation event. */
const isRefetch = (block) => block.data !== undefined && JSON.parse(block.data).type === 'refetchEvaluation'

module.exports = { openStream, parseSse, isRefetch }
