'use strict'

// The hostile-input corpus of the OFREP paths (test/security/hostile-input.test.js): bodies of
// every wrong size, media type, encoding, shape and depth; flag keys with every kind of bad
// percent-encoding and byte; header abuse (huge or repeated If-None-Match, API keys, origins,
// conflicting framing over raw sockets); wrong methods and endpoints without OFREP. Every case
// says which answers are right; `checkOfrep` holds an answer to that and to the rules of every
// answer: never a 5xx, nothing of the input in the body except the `key` member, no CORS
// header for an origin the endpoint does not list. The change streams (GET …/changes) have a
// corpus of their own: buildStreamCorpus, checkStream.

const { prng, rawRequest } = require('./hostile')

const SHOP = 'https://shop.example'
const API_KEY = 'hostile-key-0123456789abcdef'
const MARK = 'zq<reflect>' // put into hostile values: must never come back
const ALLOWED = new Set([200, 204, 304, 400, 401, 403, 404, 405, 408, 413, 431])
const OK = [200]
const FLAGS = '/ofrep/v1/evaluate/flags'

/**
 * The settings of the beacon the corpus runs against: sample5 with CORS for SHOP, sample3 with
 * an API key (from `env`) and a small body cap, sample1 (fixed) on too.
 */
const OFREP_HOSTILE_APP = Object.freeze({
  env: { BEACON_HOSTILE_OFREP_KEYS: API_KEY },
  overrides: {
    endpoints: {
      sample5: { cors: { origins: [SHOP] } },
      sample3: { ofrep: { apiKeysEnv: 'BEACON_HOSTILE_OFREP_KEYS', maxBodyBytes: 1024 } },
      sample1: { ofrep: true }
    }
  }
})
const CAP = { sample5: 8192, sample3: 1024, sample1: 8192 }

const VALID_IDS = ['7', '42', 'no-such-id-42', 'abc_DEF-123', 'a'.repeat(64)]
const VALID_KEYS = ['variant', 'features.search', 'features', 'sampleRate', 'id']
const BAD_KEYS = [
  '%', 'a%', '%zz', '%E0%A4%A', '%C3%28', '%FF', '%00', 'a%2', '%%41', '%u0041', MARK.replace('<', '%3C'), '..%2F..%2Fetc%2Fpasswd',
  '%3Cscript%3Ealert(1)%3C%2Fscript%3E', 'x'.repeat(300), '%2F', '', 'a/b/c', 'a+b', 'features..search', '.', 'constructor',
  '__proto__', 'toString', 'features.__proto__', 'hasOwnProperty', '%E2%80%A8', '%F0%9F%92%A9', "'%22", 'a;b=c'
]
const BAD_BODIES = [
  '', ' ', 'null', 'true', '42', '"7"', '[]', '[{"context":{"targetingKey":"7"}}]', '{', '{"context":', '{"context":{}', "{'context':{}}",
  '{"context":{"targetingKey":"7"},}', '{"context":{"targetingKey":"7"}}x', '{"context":NaN}', '{"context":null}', '{"context":[]}',
  '{"context":"7"}', '{"context":7}', '{}', '{"context":{}}', '{"context":{"targetingKey":null}}', '{"context":{"targetingKey":""}}',
  '{"context":{"targetingKey":7}}', '{"context":{"targetingKey":["7"]}}', '{"context":{"targetingKey":{"id":"7"}}}',
  '{"context":{"targetingKey":"a b"}}', '{"context":{"targetingKey":"' + 'a'.repeat(65) + '"}}',
  `{"context":{"targetingKey":"${MARK}"}}`, '{"context":{"targetingKey":"7\\u0000"}}', '{"context":{"targetingKey":"\\ud800"}}',
  '{"context":{"targetingKey":"../etc"}}', '{"__proto__":{"context":{"targetingKey":"7"}}}',
  '{"context":{"__proto__":{"targetingKey":"7"}}}', '{"context":{"targetingKey":"7"', '\u0000',
  '{"context":{"targetingKey":"7"}}\u0000'
]
// Valid bodies whose other members must be accepted and ignored.
const ODD_VALID_BODIES = [
  (id) => `{"context":{"targetingKey":"${id}","constructor":{"prototype":{"polluted":true}},"email":"${MARK}"}}`,
  (id) => `{"context":{"targetingKey":"${id}","__proto__":{"polluted":true}},"flags":["${MARK}"]}`,
  (id) => `{"context":{"targetingKey":"${id}","deep":${'['.repeat(1000)}${']'.repeat(1000)}}}`,
  (id) => `{"context":{"targetingKey":"${id}"},"context2":"${'x'.repeat(2000)}"}`,
  (id) => `{"context":{"targetingKey":"x"},"context":{"targetingKey":"${id}"}}`, // JSON.parse keeps the last
  (id) => `\ufeff{"context":{"targetingKey":"${id}"}}` // a byte order mark, which RFC 8259 lets a parser ignore
]
const WRONG_TYPES = [
  'text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x',
  'application/json; charset=latin1', 'application/json;charset=utf-16', 'application/jsonp', 'application/json5', 'json',
  'application/xml', 'application/json' + MARK, ''
]
const VALID_TYPES = ['application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON;CHARSET=UTF8', 'application/json; x=y']
const METHODS = ['GET', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS']

const body = (id) => JSON.stringify({ context: { targetingKey: id } })

/** One case: { kind, method, path, headers, body | bytes, expect: allowed statuses or null, origin, needles }. */
function generateCase (rand) {
  const pick = (list) => list[Math.floor(rand() * list.length)]
  const name = pick(['sample5', 'sample5', 'sample3', 'sample1'])
  const keyed = name === 'sample3' ? { 'X-API-Key': API_KEY } : {}
  const single = rand() < 0.5
  const path = `/api/${name}${FLAGS}` + (single ? '/' + pick(VALID_KEYS) : '')
  const json = { 'Content-Type': pick(VALID_TYPES), ...keyed }
  const r = rand()
  const http = (fields) => ({ kind: 'http', method: 'POST', path, headers: json, needles: [MARK, 'alert('], ...fields })
  if (r < 0.15) {
    // Valid, sometimes with extras: an allowed origin, junk query params, an If-None-Match.
    const headers = { ...json }
    if (rand() < 0.3) headers.Origin = SHOP
    if (rand() < 0.3) headers['If-None-Match'] = rand() < 0.5 ? '*' : `"${'a'.repeat(22)}", W/"x", junk`
    const query = rand() < 0.2 ? '?flagConfigEtag=%22x%22&flagConfigLastModified=1700000000' : ''
    return http({ path: path + query, headers, body: body(pick(VALID_IDS)), expect: [200, 304, 404], origin: headers.Origin })
  }
  if (r < 0.22) {
    const odd = pick(ODD_VALID_BODIES)(pick(VALID_IDS))
    return http({ body: odd, expect: Buffer.byteLength(odd) > CAP[name] ? [413] : single ? [200, 404] : OK })
  }
  if (r < 0.4) return http({ body: pick(BAD_BODIES), expect: [400, 413] })
  if (r < 0.5) {
    // A weird flag key: 200 or 404 if it decodes, 400 if its percent-encoding is malformed.
    const key = pick(BAD_KEYS)
    return http({ path: `/api/${name}${FLAGS}/${key}`, body: body('7'), expect: [200, 400, 404], key: true })
  }
  if (r < 0.58) return http({ headers: { 'Content-Type': pick(WRONG_TYPES), ...keyed }, body: body('7'), expect: [400] })
  if (r < 0.66) {
    // Over the cap: by Content-Length (refused unread), or chunked over a raw socket.
    const size = CAP[name] + 1 + Math.floor(rand() * 20000)
    const big = `{"context":{"targetingKey":"7","pad":"${MARK}${'x'.repeat(size)}"}}`
    if (rand() < 0.5) return http({ body: big, expect: [413] })
    const head = rawRequest('POST', path, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked', ...keyed })
    const chunked = Buffer.concat([head, Buffer.from(`${big.length.toString(16)}\r\n${big}\r\n0\r\n\r\n`)])
    return { kind: 'raw', bytes: chunked, expect: [413], needles: [MARK] }
  }
  if (r < 0.76) return headerAbuse(rand, pick, name, path, keyed)
  if (r < 0.84) {
    const method = pick(METHODS)
    const payload = method === 'GET' || method === 'HEAD' ? undefined : body(MARK)
    return { kind: 'http', method, path, headers: json, body: payload, expect: [405], needles: [MARK] }
  }
  if (r < 0.9) {
    // Endpoints without OFREP, and near-miss paths: the 404 of unknown paths.
    const other = pick(['/api/sample2', '/api/sample4', '/api/nope', '/api/sample5/', '/API/sample5', '/api/sample5/ofrep/v2/evaluate'])
    return http({ path: other + FLAGS + (single ? '/variant' : ''), body: body('7'), expect: [404] })
  }
  return malformed(rand, pick, path, keyed)
}

function headerAbuse (rand, pick, name, path, keyed) {
  const base = { 'Content-Type': 'application/json', ...keyed }
  const cases = [
    [{ 'If-None-Match': Array.from({ length: 300 }, (_, i) => `"${i}${MARK}"`).join(', ') }, [200]],
    [{ 'If-None-Match': '"' + 'x'.repeat(5000) }, [200]],
    [{ 'If-None-Match': `W/"${MARK}", , ,*x` }, [200]],
    [{ 'X-API-Key': MARK + 'x'.repeat(4000) }, name === 'sample3' ? [403] : [200]], // replaces sample3's key
    [{ Authorization: 'Bearer ' + MARK }, [200]], // sample3: its X-API-Key matches, which is enough
    [{ Authorization: 'Basic ' + Buffer.from('a:' + MARK).toString('base64') }, [200]],
    [{ Origin: 'https://evil.example' + MARK }, [200]],
    [{ Origin: 'null' }, [200]],
    [{ 'Content-Encoding': 'gzip' }, [400]],
    [{ Expect: '100-continue' }, [200, 417]],
    [{ 'X-Pad': 'v'.repeat(9000) }, [431]]
  ]
  const [extra, expect] = pick(cases)
  const headers = { ...base, ...extra }
  const payload = extra['Content-Encoding'] ? '\x1f\x8b\x08' + MARK : body('7')
  return { kind: 'http', method: 'POST', path, headers, body: payload, expect, needles: [MARK] }
}

function malformed (rand, pick, path, keyed) {
  const auth = keyed['X-API-Key'] ? `X-API-Key: ${keyed['X-API-Key']}\r\n` : ''
  const start = `POST ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${auth}Content-Type: application/json\r\n`
  const json = body('7')
  const raws = [
    [`${start}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`, [400]],
    [`${start}Content-Length: abc\r\n\r\n${json}`, [400]],
    [`${start}Content-Length: 2\r\nContent-Length: 3\r\n\r\nab`, [400]],
    [`${start}Transfer-Encoding: chunked\r\n\r\nzz\r\n${MARK}\r\n0\r\n\r\n`, [400]],
    [`${start}Content-Length: ${Buffer.byteLength(json) + 4}\r\n\r\n${json}\xff\xfe\x00\x01`, [400]], // not UTF-8 after the JSON
    [`${start}Content-Length: 32\r\n\r\n{"context":{"targetingKey":"\xff"}}`, [400]], // 0xFF is not UTF-8
    [`POST ${path.replace('/flags', '/flags/%E0%A4%A')} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${auth}` +
      `Content-Type: application/json\r\nContent-Length: ${json.length}\r\n\r\n${json}`, [400]],
    [`POST ${path}/\u00e9\u2028${MARK} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${auth}\r\n`, [400]]
  ]
  const [text, expect] = pick(raws)
  return { kind: 'raw', bytes: Buffer.from(text, 'latin1'), expect, needles: [MARK] }
}

const STREAM_BAD_QUERIES = [
  '', 'id=', 'id', 'ID=7', 'id=a%20b', 'id=a+b', 'id=%zz', 'id=%', 'id=%00', 'id=%C3%28', 'id=' + 'a'.repeat(65), `id=${MARK}`,
  'id=7&id=8', 'id[]=7', 'id=..%2F..%2Fetc', 'id=%3Cscript%3E', 'id=7%0D%0ASet-Cookie:%20x=1', 'x=7', '&&&', '=7'
]
const STREAM_LAST_IDS = ['1764150000000', '0', '-1', 'evt-1', MARK, '9'.repeat(40), '', ' ', '1764150000000, 2', 'x'.repeat(4000)]

/**
 * One change-stream case (GET /api/<name>/changes): a valid stream (200, read up to its first
 * bytes), or a request each check must refuse.
 * @returns {object}
 */
function generateStreamCase (rand) {
  const pick = (list) => list[Math.floor(rand() * list.length)]
  const name = pick(['sample5', 'sample5', 'sample3', 'sample1'])
  const keyed = name === 'sample3' ? { 'X-API-Key': API_KEY } : {}
  const path = `/api/${name}/changes`
  const valid = `?id=${pick(VALID_IDS)}&_=${MARK}`
  const stream = (fields) => ({ kind: 'stream', method: 'GET', path: path + valid, headers: keyed, needles: [MARK], ...fields })
  const r = rand()
  if (r < 0.25) {
    const headers = { ...keyed }
    if (rand() < 0.5) headers['Last-Event-ID'] = pick(STREAM_LAST_IDS)
    if (rand() < 0.3 && name === 'sample5') headers.Origin = SHOP
    return stream({ headers, expect: [200], origin: headers.Origin })
  }
  if (r < 0.45) return stream({ path: path + '?' + pick(STREAM_BAD_QUERIES), expect: [400] })
  if (r < 0.55) {
    // A keyed endpoint without its key, with a wrong one, or with a token that is not its own.
    const basic = { Authorization: 'Basic ' + Buffer.from('a:' + MARK).toString('base64') }
    const cases = [[{}, '', [401]], [{ 'X-API-Key': MARK }, '', [403]], [{}, `&token=${MARK}`, [403]],
      [{}, '&token=' + 'A'.repeat(32), [403]], [basic, '', [401]], [{}, '&token=a&token=b', [403]]]
    const [headers, extra, expect] = pick(cases)
    return stream({ path: `/api/sample3/changes${valid}${extra}`, headers, expect })
  }
  if (r < 0.65) {
    const method = pick(['POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'])
    return stream({ method, expect: [405] })
  }
  if (r < 0.75) {
    // Origins: a browser page of an origin sample5 does not list is refused; the others declare none.
    const origin = pick(['https://evil.example', 'null', 'https://shop.example.evil', MARK, SHOP.toUpperCase()])
    return stream({ headers: { ...keyed, Origin: origin }, expect: name === 'sample5' ? [403] : [200], origin })
  }
  if (r < 0.82) {
    const preflight = { Origin: pick([SHOP, 'https://evil.example']), 'Access-Control-Request-Method': 'GET' }
    const expect = name !== 'sample5' ? [405] : preflight.Origin === SHOP ? [204] : [403]
    return stream({ method: 'OPTIONS', headers: preflight, expect, origin: preflight.Origin })
  }
  if (r < 0.9) {
    const other = pick(['/api/sample2/changes', '/api/sample5/changes/', '/api/sample5/changesx', '/api/sample5//changes',
      '/api/nope/changes'])
    return stream({ path: other + valid, expect: [404] })
  }
  if (r < 0.95) return stream({ path: path + '?id=' + 'a'.repeat(3000), expect: [414] })
  return stream({ headers: { ...keyed, 'X-Pad': 'v'.repeat(9000) }, expect: [431] })
}

/**
 * Why the answer to a change-stream case is wrong, or null: the statuses it may get, a 200 is an
 * event stream that opens with its retry delay and a stamp, nothing of the request comes back.
 * @param {{ expect: number[], needles: string[], origin?: string }} c
 * @param {{ error?: string, status?: number, contentType?: string, setCookie?: any, acao?: string, body?: string }} res
 * @returns {string|null}
 */
function checkStream (c, res) {
  if (res.error) return `no response (${res.error})`
  if (!c.expect.includes(res.status)) return `status ${res.status}, expected one of ${c.expect.join(', ')}`
  if (res.setCookie) return 'response sets a cookie'
  if (res.acao !== undefined && c.origin !== SHOP) return `Access-Control-Allow-Origin ${JSON.stringify(res.acao)} for another origin`
  if (res.status === 200) {
    if (res.contentType !== 'text/event-stream; charset=utf-8') return `a 200 of type ${res.contentType}`
    if (!/^retry: \d+\nid: \d+\n\n/.test(res.body)) return 'a stream that does not open with retry and id'
  }
  for (const n of c.needles) if (res.body && res.body.includes(n)) return `body reflects ${JSON.stringify(n.slice(0, 40))}`
  return null
}

/**
 * @param {number} seed
 * @param {number} size
 * @returns {object[]} the change-stream cases, the same for the same seed
 */
function buildStreamCorpus (seed, size) {
  const rand = prng(seed)
  return Array.from({ length: size }, () => generateStreamCase(rand))
}

/**
 * @param {number} seed
 * @param {number} size
 * @returns {object[]} the cases, the same for the same seed
 */
function buildOfrepCorpus (seed, size) {
  const rand = prng(seed)
  return Array.from({ length: size }, () => {
    const c = generateCase(rand)
    // A flag the id's config does not have is a 404 wherever a 200 is right.
    const single = c.kind === 'http' && c.path.includes(FLAGS + '/')
    if (single && c.expect.includes(200) && !c.expect.includes(404)) c.expect = [...c.expect, 404]
    return c
  })
}

/**
 * Why the answer to a case is wrong, or null.
 * @param {{ expect: number[], needles: string[], origin?: string }} c
 * @param {{ error?: string, status?: number, setCookie?: any, acao?: string, body?: string }} res
 * @returns {string|null}
 */
function checkOfrep (c, res) {
  if (res.error) return `no response (${res.error})`
  if (!ALLOWED.has(res.status) && res.status !== 417) return `status ${res.status}`
  if (!c.expect.includes(res.status)) return `status ${res.status}, expected one of ${c.expect.join(', ')}`
  if (res.setCookie) return 'response sets a cookie'
  if (res.acao !== undefined && c.origin !== SHOP) return `Access-Control-Allow-Origin ${JSON.stringify(res.acao)} for another origin`
  if (!res.body) return null
  let value
  try {
    value = JSON.parse(res.body)
  } catch {
    return 'body is not JSON'
  }
  // The protocol sends the flag key back in `key`; nothing else of the input may come back.
  if (value && typeof value === 'object') delete value.key
  const rest = JSON.stringify(value)
  if (/<\/?script/i.test(res.body)) return 'body contains a script tag'
  for (const n of c.needles) if (rest.includes(n)) return `body reflects ${JSON.stringify(n.slice(0, 40))}`
  return null
}

module.exports = { buildOfrepCorpus, checkOfrep, buildStreamCorpus, checkStream, OFREP_HOSTILE_APP }
