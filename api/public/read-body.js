'use strict'

/**
 * Reads a request body of at most `maxBytes`. A declared Content-Length over the cap is refused
 * before a byte is read; a longer body (chunked) is refused as soon as it passes the cap. A
 * client that goes away mid-body gets nothing (there is no one to answer).
 * @param {import('http').IncomingMessage} req
 * @param {number} maxBytes
 * @param {(body: Buffer|null) => void} done null: too large
 */
function readBody (req, maxBytes, done) {
  const declared = req.headers['content-length']
  if (declared !== undefined && !(Number(declared) <= maxBytes)) {
    done(null)
    return
  }
  /** @type {Buffer[]} */
  const chunks = []
  let size = 0
  let over = false
  req.on('data', (chunk) => {
    if (over) return
    size += chunk.length
    if (size > maxBytes) {
      over = true
      req.pause()
      done(null)
      return
    }
    chunks.push(chunk)
  })
  req.on('end', () => {
    if (!over) done(Buffer.concat(chunks, size))
  })
  req.on('error', () => {}) // an aborted upload: 'end' never comes, nothing to answer
}

module.exports = { readBody }
