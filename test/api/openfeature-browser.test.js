'use strict'
/* global window */

// docs/openfeature.md's "Use it from OpenFeature", run as written in headless Chromium with the
// released @openfeature/web-sdk and @openfeature/ofrep-web-provider: its settings, its page module
// and its exposure hook (exposures.js) are bundled at test time with esbuild into a temp dir and
// served from a page origin other than beacon's. The page reads flags of every type for an id,
// revalidates with If-None-Match after a reload, gets the defaults for an unknown id, hears of a
// change made through the admin API on the id's change stream (SSE) and reads the new value with
// no reload, and its exposures land in the access log beside its OFREP views. One browser and one
// beacon for the file, on a config table of its own: the test changes an id's config.

const fs = require('node:fs')
const os = require('node:os')
const http = require('node:http')
const path = require('node:path')
const esbuild = require('esbuild')
const { chromium } = require('playwright-core')
const { startBeacon } = require('../support/beacon')
const { testClient, uniqueTable } = require('../support/hbase')
const { createToggleStore } = require('../../lib/toggles/store')
const { DEFAULTS } = require('../../config')
const { until } = require('../support/until')
const { expectIdle, recordAudit } = require('../support/loss-audit')
const { sampleConfig } = require('../../tools/dev-hbase')

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium'
const ROOT = path.join(__dirname, '..', '..')
const DOC = fs.readFileSync(path.join(ROOT, 'docs', 'openfeature.md'), 'utf8')
const SNIPPET_HOST = 'http://localhost:4000'
const SNIPPET_ORIGIN = 'https://shop.example'
const ID = '7'
const UNKNOWN_ID = 'no-such-id-browser'
const CONFIG = sampleConfig(Number(ID))
const CHANGED_VARIANT = CONFIG.variant === 'C' ? 'A' : 'C'
const CONFIG_TABLE = uniqueTable('cfg')
const TOKEN = 'openfeature-admin-token-0123-01234'
// The test's entry: the page module of the doc, then a handle on the SDK for the test to evaluate through.
const ENTRY = `import './page.js'
import { OpenFeature, ProviderEvents } from '@openfeature/web-sdk'
window.beaconTest = { OpenFeature, ProviderEvents }
`

/** The fenced blocks of the doc's "Use it from OpenFeature" section, by language. */
function docBlocks () {
  const start = DOC.indexOf('## Use it from OpenFeature')
  if (start === -1) throw new Error('docs/openfeature.md has no "## Use it from OpenFeature" section')
  const section = DOC.slice(start, DOC.indexOf('\n## ', start + 1))
  const blocks = [...section.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map(([, lang, text]) => ({ lang, text }))
  return { json: blocks.filter((b) => b.lang === 'json').map((b) => b.text), js: blocks.filter((b) => b.lang === 'js').map((b) => b.text) }
}

/**
 * The doc's page module and exposure hook, pointed at `beaconUrl`, bundled into one ES module
 * (`app.js` in a temp dir, beside them).
 * @returns {Promise<{ dir: string, bundle: string }>}
 */
async function bundle (blocks, beaconUrl) {
  const [pageModule, exposures] = blocks.js
  expect(pageModule).toContain("from '@openfeature/ofrep-web-provider'")
  expect(exposures).toContain('OpenFeature.addHooks(')
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-openfeature-'))
  fs.writeFileSync(path.join(dir, 'page.js'), pageModule.replaceAll(SNIPPET_HOST, beaconUrl))
  fs.writeFileSync(path.join(dir, 'exposures.js'), exposures.replaceAll(SNIPPET_HOST, beaconUrl))
  const result = await esbuild.build({
    stdin: { contents: ENTRY, resolveDir: dir, sourcefile: 'entry.js' },
    nodePaths: [path.join(ROOT, 'node_modules')], // the temp dir has none: the packages are the repo's
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    outfile: path.join(dir, 'app.js'),
    logLevel: 'silent'
  })
  expect(result.errors).toEqual([])
  return { dir, bundle: fs.readFileSync(path.join(dir, 'app.js'), 'utf8') }
}

/** A page server: one origin, serving the page (HTML) and the bundled module it is given. */
async function pageServer () {
  let script = ''
  const html = '<!doctype html><html><head><meta charset="utf-8"><title>shop</title></head>' +
    '<body><p id="banner"></p><script type="module" src="/app.js"></script></body></html>'
  const server = http.createServer((req, res) => {
    const js = req.url === '/app.js'
    res.writeHead(200, { 'Content-Type': js ? 'text/javascript; charset=utf-8' : 'text/html; charset=utf-8' })
    res.end(js ? script : html)
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}`
  return {
    origin,
    url: origin + '/page.html',
    serve: (text) => { script = text },
    close: () => new Promise((resolve) => server.close(resolve))
  }
}

let app, site, browser, page, dir
const problems = []
/** The OFREP requests the page sent (preflights aside): the views beacon must have logged. */
const views = []

beforeAll(async () => {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}: the browser tests need a real browser. ` +
      'Install Debian\'s chromium (apt-get install -y chromium; .ci/run does) or set CHROMIUM_PATH.')
  }
  const blocks = docBlocks()
  expect(blocks.json).toHaveLength(1)
  expect(blocks.js).toHaveLength(3)
  // The settings need the page's origin and the page's script needs beacon's URL: the page server listens first.
  site = await pageServer()
  const overrides = JSON.parse(blocks.json[0].replaceAll(SNIPPET_ORIGIN, site.origin))
  const admin = testClient()
  await admin.admin.createTable(CONFIG_TABLE, { families: ['c'] })
  // Written straight to the table before beacon starts, not through the admin API: no change
  // notice, so no stream that opens soon after is told of a change it may have missed (one more
  // refetch to count); and beacon's first scan of the config ids finds it.
  const { configFamily: family, configQualifier: qualifier } = DEFAULTS.hbase
  await createToggleStore({ client: admin, table: CONFIG_TABLE, family, qualifier }).write(ID, CONFIG)
  await admin.close()
  app = await startBeacon({ env: { BEACON_ADMIN_TOKEN: TOKEN }, overrides: { ...overrides, hbase: { configTable: CONFIG_TABLE } } })
  // A worker cannot vouch for changes made before it started, so a change stream opened in its
  // first moments is told to refetch at once (api/public/ofrep/change-record.js): one more view, or not,
  // by timing. The page's views are counted exactly, so it opens once a new stream is not told so.
  const quiet = (opening) => opening.startsWith('200 ') && !opening.includes('refetchEvaluation')
  await until('a new change stream with no refetch', async () => quiet(await streamOpening()), 15000, 200)
  const built = await bundle(blocks, app.url)
  dir = built.dir
  site.serve(built.bundle)
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })
  const context = await browser.newContext()
  page = await context.newPage()
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`))
  page.on('console', (msg) => { if (msg.type() === 'error') problems.push(`console: ${msg.text()}`) })
  page.on('requestfailed', (req) => {
    // A change stream the provider closes (a new id) or the page leaves (a reload) is aborted.
    const closedStream = req.url().includes('/api/sample5/changes?') && req.failure()?.errorText === 'net::ERR_ABORTED'
    if (!closedStream) problems.push(`request failed: ${req.url()}`)
  })
  page.on('response', (res) => {
    const req = res.request()
    if (req.method() === 'POST' && req.url().includes('/ofrep/')) {
      views.push({ url: req.url(), status: res.status(), ifNoneMatch: req.headers()['if-none-match'], etag: res.headers().etag })
    }
  })
})

afterAll(async () => {
  if (browser) await browser.close()
  if (app) await app.close()
  const admin = testClient()
  await admin.admin.deleteTable(CONFIG_TABLE).catch(() => {})
  await admin.close()
  if (site) await site.close()
  if (dir) fs.rmSync(dir, { recursive: true, force: true })
  await esbuild.stop() // its service process
})

/** The first bytes of a new change stream of an id nobody reads; the stream is closed after them. */
function streamOpening () {
  return new Promise((resolve, reject) => {
    const req = http.get(`${app.url}/api/sample5/changes?id=probe`, { agent: false }, (res) => {
      res.once('data', (chunk) => {
        resolve(`${res.statusCode} ${chunk}`)
        req.destroy()
      })
    })
    req.on('error', reject)
  })
}

/** Loads (or reloads) the page and waits until its module has run to its end. */
async function load (reload = false) {
  await (reload ? page.reload() : page.goto(site.url))
  await page.waitForFunction(() => window.beaconTest !== undefined, null, { timeout: 15000 })
}

/** Evaluations in the page, through the default client: [kind, key, default] → details. */
function evaluate (calls) {
  return page.evaluate((list) => {
    const client = window.beaconTest.OpenFeature.getClient()
    const method = { boolean: 'getBooleanDetails', string: 'getStringDetails', number: 'getNumberDetails', object: 'getObjectDetails' }
    return list.map(([kind, key, fallback]) => {
      const { flagKey, value, reason, errorCode } = client[method[kind]](key, fallback)
      return { flagKey, value, reason, errorCode: errorCode ?? null }
    })
  }, calls)
}

test('the page, on another origin, reads boolean, string, number and object flags for an id', async () => {
  await load()
  expect(await page.textContent('#banner')).toBe(`variant ${CONFIG.variant}`)
  const reason = 'TARGETING_MATCH'
  expect(await evaluate([
    ['boolean', 'features.search', !CONFIG.features.search],
    ['string', 'variant', 'none'],
    ['number', 'sampleRate', -1],
    ['object', 'features', {}],
    ['boolean', 'features.nope', true]
  ])).toEqual([
    { flagKey: 'features.search', value: CONFIG.features.search, reason, errorCode: null },
    { flagKey: 'variant', value: CONFIG.variant, reason, errorCode: null },
    { flagKey: 'sampleRate', value: CONFIG.sampleRate, reason, errorCode: null },
    { flagKey: 'features', value: CONFIG.features, reason, errorCode: null },
    { flagKey: 'features.nope', value: true, reason: 'ERROR', errorCode: 'FLAG_NOT_FOUND' }
  ])
  const url = `${app.url}/api/sample5/ofrep/v1/evaluate/flags`
  expect(views).toEqual([{ url, status: 200, ifNoneMatch: undefined, etag: expect.any(String) }])
  expect(problems).toEqual([])
})

test('a reload answers from the provider\'s cache and revalidates: If-None-Match with the exposed ETag, 304', async () => {
  await load(true)
  expect(await page.textContent('#banner')).toBe(`variant ${CONFIG.variant}`)
  expect(await evaluate([['string', 'variant', 'none']]))
    .toEqual([{ flagKey: 'variant', value: CONFIG.variant, reason: 'CACHED', errorCode: null }])
  await until('the background revalidation', async () => views.length === 2, 10000)
  expect(views[1]).toEqual({ ...views[0], status: 304, ifNoneMatch: views[0].etag })
  expect(problems).toEqual([])
})

test("an unknown id gets the endpoint's defaultConfig, and the code default for keys it lacks", async () => {
  await page.evaluate((id) => window.beaconTest.OpenFeature.setContext({ targetingKey: id }), UNKNOWN_ID)
  expect(await evaluate([['object', 'features', { search: true }], ['string', 'variant', 'A']])).toEqual([
    { flagKey: 'features', value: {}, reason: 'STATIC', errorCode: null },
    { flagKey: 'variant', value: 'A', reason: 'ERROR', errorCode: 'FLAG_NOT_FOUND' }
  ])
  // A new targetingKey forgets the old ETag: the request is unconditional.
  expect(views.slice(2)).toEqual([{ ...views[0], status: 200, etag: expect.any(String) }])
  expect(problems).toEqual([])
})

test('sees a toggle change through SSE without a reload: ConfigurationChanged, then the new value', async () => {
  const stream = `${app.url}/api/sample5/changes?id=${ID}`
  const streamOpen = page.waitForResponse((res) => res.url() === stream && res.status() === 200)
  await page.evaluate((id) => window.beaconTest.OpenFeature.setContext({ targetingKey: id }), ID)
  await streamOpen // the bulk answer's eventStreams, joined to the baseUrl's origin
  await page.evaluate(() => {
    const { OpenFeature, ProviderEvents } = window.beaconTest
    window.beaconTest.changed = []
    OpenFeature.getClient().addHandler(ProviderEvents.ConfigurationChanged, (e) => window.beaconTest.changed.push(e.flagsChanged))
  })
  const put = await fetch(`${app.adminUrl}/admin/config/${ID}`, {
    method: 'PUT',
    headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ ...CONFIG, variant: CHANGED_VARIANT })
  })
  expect(put.status).toBe(200)
  await page.waitForFunction(() => window.beaconTest.changed.length > 0, null, { timeout: 10000 })
  expect(await page.evaluate(() => window.beaconTest.changed)).toEqual([['variant']])
  expect(await evaluate([['string', 'variant', 'none']]))
    .toEqual([{ flagKey: 'variant', value: CHANGED_VARIANT, reason: 'TARGETING_MATCH', errorCode: null }])
  // The context change fetched afresh (a new targetingKey); the refetch the event caused carried
  // the ETag it had and the event's lastModified, and got the new flags.
  const [fresh, refetch] = views.slice(3)
  expect(views).toHaveLength(5)
  expect(fresh).toEqual({ ...views[0], etag: expect.any(String) })
  const lastModified = expect.stringMatching(/\?flagConfigLastModified=\d+$/)
  expect(refetch).toEqual({ ...fresh, url: lastModified, ifNoneMatch: fresh.etag, etag: expect.any(String) })
  expect(refetch.url.startsWith(views[0].url + '?')).toBe(true)
  expect(refetch.etag).not.toBe(fresh.etag)
  expect(problems).toEqual([])
})

test('exposures: each evaluation that served a value is one event row, beside one row per OFREP view', async () => {
  const accepted = () => metric('beacon_events_total{endpoint="sample5",event="exposure"}')
  await page.goto('about:blank') // pagehide: the second page view sends its exposures (the reload sent the first's)
  await until('the exposures accepted', async () => (await accepted()) === 9, 15000)
  const idle = await expectIdle(app.adminUrl) // the loss audit: nothing pending, so every row is in HBase
  const rows = await accessRows()
  recordAudit({ answered: views.length + (await accepted()), rows: rows.length, idle })
  const exposure = (id, variant) => ({ id, variant })
  const flag = (key, value) => exposure(ID, `${key}-${value}`)
  expect(rows.filter((r) => r.event).map((r) => exposure(r.id, r.variant)).sort(byJson)).toEqual([
    flag('variant', CONFIG.variant), // the page module's own evaluation
    flag('features_search', CONFIG.features.search),
    flag('variant', CONFIG.variant),
    flag('sampleRate', String(CONFIG.sampleRate).replace('.', '_')),
    flag('features', 'object'),
    flag('variant', CONFIG.variant), // after the reload, from the provider's cache: the page module's
    flag('variant', CONFIG.variant), // and the test's
    exposure(UNKNOWN_ID, 'features-object'),
    flag('variant', CHANGED_VARIANT) // after the change
  ].sort(byJson))
  for (const row of rows.filter((r) => r.event)) {
    expect(row).toMatchObject({ endpoint: 'sample5', event: 'exposure', ref: site.origin + '/' })
  }
  const viewRows = rows.filter((r) => r.status !== undefined).map((r) => ({ id: r.id, status: r.status }))
  expect(viewRows.sort(byJson)).toEqual(views.map((v, i) => ({ id: i === 2 ? UNKNOWN_ID : ID, status: v.status })).sort(byJson))
  expect(views.map((v) => v.status)).toEqual([200, 304, 200, 200, 200])
  expect(await accepted()).toBe(9)
  expect(problems).toEqual([])
})

test('a rollout answer: the web provider reads reason SPLIT and the variant for an id without a row', async () => {
  const rollout = {
    salt: 'browser',
    variants: [{ name: 'A', weight: 0, config: { variant: 'A' } }, { name: 'B', weight: 100, config: { variant: 'B' } }]
  }
  const put = await fetch(`${app.adminUrl}/admin/endpoints/sample5/rollout`, {
    method: 'PUT',
    headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(rollout)
  })
  expect(put.status).toBe(200)
  await load() // the exposures test left the page
  await page.evaluate((id) => window.beaconTest.OpenFeature.setContext({ targetingKey: id }), 'rollout-visitor')
  const details = await page.evaluate(() => {
    const { value, reason, variant, errorCode } = window.beaconTest.OpenFeature.getClient().getStringDetails('variant', 'none')
    return { value, reason, variant, errorCode: errorCode ?? null }
  })
  expect(details).toEqual({ value: 'B', reason: 'SPLIT', variant: 'B', errorCode: null })
  expect(problems).toEqual([])
})

const byJson = (a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1)

async function metric (line) {
  const found = (await app.metrics.metrics()).split('\n').find((l) => l.startsWith(line + ' '))
  return found ? Number(found.split(' ').pop()) : 0
}

/** Every row of the test's access-log table (views and events of sample5). */
async function accessRows () {
  const rows = []
  for await (const row of app.client.scan(app.accessLogTable, {})) rows.push(JSON.parse(row.cells[0].value.toString()))
  return rows
}
