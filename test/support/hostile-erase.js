'use strict'

// The hostile-input corpus of the erase route, POST /admin/log/erase on the admin port
// (test/security/hostile-input.test.js): ids of every wrong kind, times and flags that are not,
// unknown and repeated parameters, bodies, wrong tokens and methods, raw request lines. Every
// case says which answers are right; `checkErase` holds an answer to that and to the rules of
// every answer: never a 5xx, JSON, nothing of the input in the body (the id of a valid erase
// comes back: by then it is a valid id).

const { prng, rawRequest } = require('./hostile')

const TOKEN = 'hostile-erase-token-0123456789-012'
const MARK = 'zq<reflect>' // put into hostile values: must never come back
const ALLOWED = new Set([200, 400, 401, 404, 405, 413])
const ROUTE = '/admin/log/erase'
const VALID_IDS = ['7', 'no-such-id-42', 'abc_DEF-123', 'a'.repeat(64)]
const BAD_IDS = [
  'a'.repeat(65), '%00', '%FF', 'a%00b', '..%2F..%2Fetc%2Fpasswd', '%3Cscript%3E', encodeURIComponent(MARK), 'a+b', '%E2%80%A8',
  '%F0%9F%92%A9', '7%0D%0AX:1', '%', '%zz', '%E0%A4%A', '1;DROP', '*', '.*', '%22id%22:%227%22', 'x'.repeat(5000)
]
const BAD_TIMES = ['yesterday', '%00', encodeURIComponent(MARK), '-1y', '99999999999999', '2026-02-30', '-0m0', '1e12']
// Beside a valid id: each makes the whole request invalid.
const BAD_EXTRAS = ['dryRun=yes', 'dryRun=1&dryRun=1', 'endpoint=sample5', 'status=200', 'ID=7', 'id[]=7', 'from=now&to=-1h', '%69d=7']

const EMPTY_FROM = '2001-01-01T00:00:00Z'
const EMPTY_TO = '2001-01-01T00:01:00Z'

/**
 * @param {number} seed
 * @param {number} size cases
 * @returns {Array<{ kind: 'http'|'raw', method?: string, path?: string, headers?: object, body?: string, bytes?: Buffer,
 *   expect: number[], needles: string[] }>}
 */
function buildEraseCorpus (seed, size) {
  const rand = prng(seed)
  const pick = (list) => list[Math.floor(rand() * list.length)]
  const auth = { Authorization: `Bearer ${TOKEN}` }
  // A valid erase reads a minute long before any row this run writes: cheap, answered 200. (The
  // last minute is not empty: the other corpora of the file log views of id 7 just before, and
  // erasing them means deleting rows and counting their minutes again, dozens of requests at once.)
  const valid = () => `id=${pick(VALID_IDS)}&from=${EMPTY_FROM}&to=${EMPTY_TO}${rand() < 0.5 ? '&dryRun=1' : ''}`
  const cases = []
  while (cases.length < size) {
    const r = rand()
    if (r < 0.1) {
      cases.push({ kind: 'http', method: 'POST', path: `${ROUTE}?${valid()}`, headers: auth, expect: [200], needles: [] })
    } else if (r < 0.4) {
      const id = pick(BAD_IDS)
      cases.push({ kind: 'http', method: 'POST', path: `${ROUTE}?id=${id}`, headers: auth, expect: [400], needles: [MARK, id] })
    } else if (r < 0.55) {
      const time = pick(BAD_TIMES)
      const query = `id=7&${rand() < 0.5 ? 'from' : 'to'}=${time}`
      cases.push({ kind: 'http', method: 'POST', path: `${ROUTE}?${query}`, headers: auth, expect: [400], needles: [MARK] })
    } else if (r < 0.65) {
      const query = `id=7&${pick(BAD_EXTRAS)}`
      cases.push({ kind: 'http', method: 'POST', path: `${ROUTE}?${query}`, headers: auth, expect: [400], needles: [] })
    } else if (r < 0.75) {
      // No token, a wrong one, or one in the wrong place: nothing happens.
      const headers = pick([{}, { Authorization: 'Bearer nope' }, { Authorization: TOKEN }, { Authorization: `Basic ${TOKEN}` }])
      cases.push({ kind: 'http', method: 'POST', path: `${ROUTE}?${valid()}`, headers, expect: [401], needles: [] })
    } else if (r < 0.83) {
      const method = pick(['GET', 'PUT', 'DELETE', 'PATCH'])
      cases.push({ kind: 'http', method, path: `${ROUTE}?${valid()}`, headers: auth, expect: [405], needles: [] })
    } else if (r < 0.9) {
      // A body is not how an erase is asked: a valid one is ignored, a broken or huge one refused.
      const body = pick(['{"id":"7"}', '{', `{"id":"${MARK}"}`, 'x'.repeat(20000), '[]'])
      const expect = body.startsWith('{"') || body === '[]' ? [400] : [400, 413]
      const headers = { ...auth, 'Content-Type': 'application/json' }
      cases.push({ kind: 'http', method: 'POST', path: `${ROUTE}?id=${encodeURIComponent(MARK)}`, headers, body, expect, needles: [MARK] })
    } else if (r < 0.95) {
      const path = pick([`${ROUTE}/x`, `${ROUTE}%00`, '/admin/log/erase/../erase', `/admin/log/Erase?${valid()}`])
      cases.push({ kind: 'http', method: 'POST', path, headers: auth, expect: [200, 400, 404, 405], needles: [] })
    } else {
      // Raw bytes in the request line, over a raw socket.
      const bytes = rawRequest('POST', `${ROUTE}?id=${decodeURIComponent('%E2%80%A8')}${MARK}`, auth)
      cases.push({ kind: 'raw', bytes, expect: [400], needles: [MARK] })
    }
  }
  return cases
}

/**
 * Why an answer to a case is wrong, or null.
 * @param {{ expect: number[], needles: string[] }} c
 * @param {{ status?: number, body?: string, setCookie?: any, error?: string }} res
 * @returns {string|null}
 */
function checkErase (c, res) {
  if (res.error) return `no response (${res.error})`
  if (!ALLOWED.has(/** @type {number} */ (res.status))) return `status ${res.status}`
  if (!c.expect.includes(/** @type {number} */ (res.status))) return `status ${res.status}, expected one of ${c.expect.join(', ')}`
  if (res.setCookie) return 'response sets a cookie'
  // node's HTTP parser answers a request line it cannot parse with a bare 400.
  const body = res.body || ''
  try {
    if (body !== '') JSON.parse(body)
  } catch {
    return 'body is not JSON'
  }
  for (const needle of c.needles) {
    for (const s of [needle, safeDecode(needle)]) {
      if (s.length >= 3 && body.includes(s)) return `body reflects ${JSON.stringify(s.slice(0, 40))}`
    }
  }
  return null
}

function safeDecode (s) {
  try { return decodeURIComponent(s) } catch { return s }
}

module.exports = { buildEraseCorpus, checkErase, ERASE_TOKEN: TOKEN }
