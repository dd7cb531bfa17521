'use strict'

// One OFREP request as the JS providers send it (POST, application/json; charset=utf-8, the
// body `{"context":{...}}`) over a fresh connection, for the tests of the OFREP paths.

const http = require('node:http')

/**
 * @param {string} url the whole URL (`http://127.0.0.1:4000/api/sample5/ofrep/v1/evaluate/flags`)
 * @param {{ method?: string, headers?: Record<string, string>, body?: string, targetingKey?: string }} [options]
 *   body: sent as is (default: a context with `targetingKey`, '42' unless given); headers are
 *   added to the Content-Type of a POST
 * @returns {Promise<{ status: number, headers: http.IncomingHttpHeaders, text: string, json: any }>} json:
 *   the parsed body, null when empty
 */
function ofrepPost (url, { method = 'POST', headers = {}, body, targetingKey = '42' } = {}) {
  const text = body ?? JSON.stringify({ context: { targetingKey } })
  const all = method === 'POST' ? { 'Content-Type': 'application/json; charset=utf-8', ...headers } : headers
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers: all, agent: false }, (res) => {
      const chunks = []
      res.on('data', (c) => chunks.push(c))
      res.on('end', () => {
        const out = Buffer.concat(chunks).toString('utf8')
        resolve({ status: res.statusCode || 0, headers: res.headers, text: out, json: out ? JSON.parse(out) : null })
      })
    })
    req.on('error', reject)
    req.end(method === 'POST' || method === 'PUT' ? text : undefined)
  })
}

module.exports = { ofrepPost }
