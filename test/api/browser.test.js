'use strict'
/* global document -- used inside callbacks that run in the page */

// docs/page.md's "Use it from a page", run as written in headless Chromium: the settings block and
// the three snippets (script tag, fetch, sendBeacon) are read from its section "Three snippets",
// pages are served from two origins (one listed in cors.origins, one not), and what the pages send
// is found in HBase. (README's page snippet is the first of them: test/docs/readme.unit.test.js.)

const fs = require('node:fs')
const http = require('node:http')
const path = require('node:path')
const { chromium } = require('playwright-core')
const { startBeacon } = require('../support/beacon')
const { until } = require('../support/until')
const { sampleConfig } = require('../../tools/dev-hbase')

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium'
const PAGE_DOC = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'page.md'), 'utf8')
const SNIPPET_HOST = 'http://localhost:4000'
const SNIPPET_ORIGIN = 'https://shop.example'
const ID = 7
const VARIANT = sampleConfig(ID).variant

/** The fenced blocks of docs/page.md's "Three snippets" section, by language. */
function pageDocBlocks () {
  const start = PAGE_DOC.indexOf('## Three snippets')
  if (start === -1) throw new Error('docs/page.md has no "## Three snippets" section')
  const end = PAGE_DOC.indexOf('\n## ', start + 1)
  const section = PAGE_DOC.slice(start, end)
  const blocks = [...section.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map(([, lang, text]) => ({ lang, text }))
  return {
    json: blocks.filter((b) => b.lang === 'json').map((b) => b.text),
    html: blocks.filter((b) => b.lang === 'html').map((b) => b.text)
  }
}

/** A page server: one origin, serving `page.html` with whatever HTML it is given. */
async function pageServer () {
  let html = ''
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' })
    res.end(`<!doctype html><html><head><meta charset="utf-8"><title>shop</title></head><body>${html}</body></html>`)
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}`
  return {
    origin,
    url: origin + '/page.html',
    serve: (text) => { html = text },
    close: () => new Promise((resolve) => server.close(resolve))
  }
}

async function eventRows (app) {
  const rows = []
  for await (const row of app.client.scan(app.accessLogTable, {})) {
    const entry = JSON.parse(row.cells[0].value.toString())
    if (entry.event) rows.push(entry)
  }
  return rows
}

async function metric (app, line) {
  const text = await app.metrics.metrics()
  const found = text.split('\n').find((l) => l.startsWith(line + ' '))
  return found ? Number(found.split(' ').pop()) : 0
}

let app, allowed, other, browser
const snippets = pageDocBlocks()

beforeAll(async () => {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}: the browser tests need a real browser. ` +
      'Install Debian\'s chromium (apt-get install -y chromium; .ci/run does) or set CHROMIUM_PATH.')
  }
  allowed = await pageServer()
  other = await pageServer()
  expect(snippets.json).toHaveLength(1)
  expect(snippets.html).toHaveLength(3)
  // docs/page.md's settings, with its example origin replaced by the allowed page server's.
  const overrides = JSON.parse(snippets.json[0].replaceAll(SNIPPET_ORIGIN, allowed.origin))
  app = await startBeacon({ overrides })
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })
})

afterAll(async () => {
  if (browser) await browser.close()
  if (app) await app.close()
  if (allowed) await allowed.close()
  if (other) await other.close()
})

/**
 * Opens snippet `n` of docs/page.md on a page of `site`, pointed at the test beacon.
 * @returns {Promise<{ page: import('playwright-core').Page, problems: string[] }>}
 */
async function open (site, n, { javaScriptEnabled = true } = {}) {
  site.serve(snippets.html[n].replaceAll(SNIPPET_HOST, app.url))
  const context = await browser.newContext({ javaScriptEnabled })
  const page = await context.newPage()
  const problems = []
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`))
  page.on('console', (msg) => { if (msg.type() === 'error') problems.push(`console: ${msg.text()}`) })
  page.on('requestfailed', (req) => problems.push(`request failed: ${req.url()}`))
  await page.goto(site.url)
  return { page, problems }
}

const banner = (page) => page
  .waitForFunction(() => document.getElementById('banner').textContent !== '', null, { timeout: 10000 })
  .then(() => page.textContent('#banner'))

test('1. the script tag works from any origin (JSONP needs no CORS)', async () => {
  for (const site of [allowed, other]) {
    const { page, problems } = await open(site, 0)
    expect(await banner(page)).toBe(`variant ${VARIANT}`)
    expect(problems).toEqual([])
    await page.context().close()
  }
})

test('2. fetch() reads the JSON from the listed origin; the browser blocks another origin', async () => {
  const deniedBefore = await metric(app, 'beacon_cors_requests_total{endpoint="sample5",outcome="denied"}')
  const { page, problems } = await open(allowed, 1)
  expect(await banner(page)).toBe(`variant ${VARIANT}`)
  expect(problems).toEqual([])
  await page.context().close()

  const blocked = await open(other, 1)
  expect(await banner(blocked.page)).toBe('the default page')
  // Chromium says why in the console: the answer had no Access-Control-Allow-Origin.
  expect(blocked.problems.join('\n')).toMatch(/Access-Control-Allow-Origin/)
  await blocked.page.context().close()
  expect(await metric(app, 'beacon_cors_requests_total{endpoint="sample5",outcome="denied"}')).toBe(deniedBefore + 1)
})

test('3. sendBeacon on pagehide: the exposure lands in HBase; another origin\'s is refused', async () => {
  const { page, problems } = await open(allowed, 2)
  expect(await banner(page)).toBe(`variant ${VARIANT}`)
  expect(await eventRows(app)).toEqual([])
  await page.goto('about:blank') // leaving the page fires pagehide
  await until('the exposure row in HBase', async () => (await eventRows(app)).length > 0, 15000)
  const rows = await eventRows(app)
  expect(rows).toEqual([
    expect.objectContaining({ endpoint: 'sample5', id: String(ID), event: 'exposure', variant: VARIANT, ref: allowed.origin + '/' })
  ])
  expect(rows[0].ua).toMatch(/Chrome/)
  expect(problems).toEqual([])
  await page.context().close()

  // A page of another site sends an exposure straight away (its fetch() is blocked anyway).
  const refusedBefore = await metric(app, 'beacon_event_requests_total{endpoint="sample5",outcome="ORIGIN_NOT_ALLOWED"}')
  const intruder = await open(other, 2)
  expect(await intruder.page.evaluate(
    ([url, id]) => navigator.sendBeacon(url, JSON.stringify([{ id, event: 'exposure', variant: 'Z' }])),
    [`${app.url}/api/sample5/events`, String(ID)]
  )).toBe(true)
  await until('the refused beacon counted', async () =>
    (await metric(app, 'beacon_event_requests_total{endpoint="sample5",outcome="ORIGIN_NOT_ALLOWED"}')) === refusedBefore + 1, 10000)
  await intruder.page.context().close()
  await app.sinks.get('hbase').flush()
  expect((await eventRows(app)).filter((r) => r.variant === 'Z')).toEqual([])
})

test('3b. without JavaScript the <noscript> GIF reports the exposure', async () => {
  const before = (await eventRows(app)).length
  const { page, problems } = await open(allowed, 2, { javaScriptEnabled: false })
  // The image really is a 1x1 GIF the browser decoded.
  await page.waitForFunction(() => document.querySelector('img')?.complete, null, { timeout: 10000 })
  expect(await page.evaluate(() => [document.querySelector('img').naturalWidth, document.querySelector('img').naturalHeight]))
    .toEqual([1, 1])
  await until('the GIF exposure row in HBase', async () => (await eventRows(app)).length > before, 15000)
  const rows = await eventRows(app)
  expect(rows).toHaveLength(before + 1)
  for (const row of rows) {
    expect(row).toEqual(expect.objectContaining({ id: String(ID), event: 'exposure', variant: 'B', ref: allowed.origin + '/' }))
  }
  expect(problems).toEqual([])
  await page.context().close()
})
