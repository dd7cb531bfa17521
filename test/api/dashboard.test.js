'use strict'
/* global document, MutationObserver -- used inside callbacks that run in the page */

// The live ops dashboard: its metrics math on fixed inputs, the page and its assets over real
// sockets, and the page itself in a real headless Chromium while traffic flows against a real
// beacon and HBase.

const fs = require('node:fs')
const path = require('node:path')
const { chromium } = require('playwright-core')
const math = require('../../api/admin/dashboard/metrics-math')
const { startBeacon, request } = require('../support/beacon')
const { chartAxes, expectReadableAxes, overlappingTimeLabels } = require('../support/chart-axes')

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium'
const OUTPUT_DIR = path.join(__dirname, '..', '..', 'test-output')
const LE = ['0.001', '0.005', '0.01', '0.1', '+Inf']
// The charts of the live page; the backlog counts entries, the others are rates and latencies.
const CHARTS = ['chart-rps', 'chart-p99', 'chart-hbase', 'chart-backlog']

/** Every chart's axes read at a glance (test/support/chart-axes.js). */
async function expectChartsReadable (page, when) {
  for (const id of CHARTS) expectReadableAxes(`${id} ${when}`, await chartAxes(page, id), { counts: id === 'chart-backlog' })
}

function chromiumPath () {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}: the dashboard test needs a real browser. ` +
      'Install Debian\'s chromium (apt-get install -y chromium; npm test does as root) or set CHROMIUM_PATH.')
  }
  return CHROMIUM
}

/** Prometheus text of one histogram series with the given cumulative bucket counts. */
function histogram (name, labels, counts, sum) {
  const lines = LE.map((le, i) => `${name}_bucket{${labels},le="${le}"} ${counts[i]}`)
  return lines.concat([`${name}_sum{${labels}} ${sum}`, `${name}_count{${labels}} ${counts[counts.length - 1]}`]).join('\n')
}

describe('metrics math', () => {
  test('parses samples, labels with escapes, special values; skips comments and broken lines', () => {
    const samples = math.parsePrometheusText([
      '# HELP beacon_x_total a counter',
      '# TYPE beacon_x_total counter',
      'beacon_x_total{endpoint="sample3",status="200"} 12',
      'beacon_x_total{endpoint="we\\"ird\\\\one\\n",status="500",} 3 1700000000000',
      'beacon_up 1',
      'beacon_h_bucket{le="+Inf"} +Inf',
      'beacon_nan NaN',
      'beacon_broken{endpoint="x} 1',
      'beacon_noval{a="b"}',
      '',
      '  '
    ].join('\n'))
    expect(samples.get('beacon_x_total')).toEqual([
      { labels: { endpoint: 'sample3', status: '200' }, value: 12 },
      { labels: { endpoint: 'we"ird\\one\n', status: '500' }, value: 3 }
    ])
    expect(samples.get('beacon_up')).toEqual([{ labels: {}, value: 1 }])
    expect(samples.get('beacon_h_bucket')[0].value).toBe(Infinity)
    expect(samples.get('beacon_nan')[0].value).toBeNaN()
    expect(samples.has('beacon_broken')).toBe(false)
    expect(samples.has('beacon_noval')).toBe(false)
    expect(math.sum(samples, 'beacon_x_total')).toBe(15)
    expect(math.sum(samples, 'beacon_x_total', { status: '200' })).toBe(12)
    expect(math.sum(samples, 'beacon_missing')).toBeNull()
    expect(math.labelValues(samples, 'beacon_x_total', 'status')).toEqual(['200', '500'])
  })

  test('counter deltas: a counter that went back is a gap, not a spike', () => {
    expect(math.counterDelta(10, 25)).toBe(15)
    expect(math.counterDelta(10, 10)).toBe(0)
    expect(math.counterDelta(25, 10)).toBeNull()
    expect(math.counterDelta(undefined, 10)).toBeNull()
    expect(math.counterDelta(10, null)).toBeNull()
  })

  test('histogram quantiles interpolate linearly inside buckets, like histogram_quantile', () => {
    const buckets = [{ le: 0.1, count: 50 }, { le: 0.2, count: 90 }, { le: 0.4, count: 100 }, { le: Infinity, count: 100 }]
    expect(math.histogramQuantile(0.5, buckets)).toBeCloseTo(0.1, 12) // rank 50: top of the first bucket
    expect(math.histogramQuantile(0.25, buckets)).toBeCloseTo(0.05, 12) // first bucket starts at 0
    expect(math.histogramQuantile(0.7, buckets)).toBeCloseTo(0.15, 12) // rank 70: halfway through 0.1..0.2
    expect(math.histogramQuantile(0.99, buckets)).toBeCloseTo(0.38, 12) // rank 99: 9/10 of 0.2..0.4
    // Order of the input does not matter.
    expect(math.histogramQuantile(0.7, buckets.slice().reverse())).toBeCloseTo(0.15, 12)
    // A rank in the +Inf bucket is reported as the highest finite bound.
    expect(math.histogramQuantile(0.99, [{ le: 0.1, count: 1 }, { le: Infinity, count: 10 }])).toBe(0.1)
    // No observations, or no +Inf bucket: unknown.
    expect(math.histogramQuantile(0.5, [{ le: 0.1, count: 0 }, { le: Infinity, count: 0 }])).toBeNull()
    expect(math.histogramQuantile(0.5, [{ le: 0.1, count: 3 }])).toBeNull()
  })

  test('bucket deltas give the quantiles of one interval, not of all time', () => {
    // Before: 1000 slow requests (all in 0.01..0.1). In the interval: 100 fast ones (< 1 ms).
    const prev = math.parsePrometheusText(histogram('beacon_d', 'endpoint="a"', [0, 0, 0, 1000, 1000], 50))
    const cur = math.parsePrometheusText(histogram('beacon_d', 'endpoint="a"', [100, 100, 100, 1100, 1100], 50.01))
    const buckets = math.bucketDeltas(prev, cur, 'beacon_d', { endpoint: 'a' })
    expect(buckets).toEqual([
      { le: 0.001, count: 100 }, { le: 0.005, count: 100 }, { le: 0.01, count: 100 }, { le: 0.1, count: 100 }, { le: Infinity, count: 100 }
    ])
    expect(math.histogramQuantile(0.5, buckets)).toBeCloseTo(0.0005, 12)
    // A bucket that went back (a restarted worker in an aggregated sum): unknown for this interval.
    const reset = math.parsePrometheusText(histogram('beacon_d', 'endpoint="a"', [1, 1, 1, 1, 1], 0.001))
    expect(math.bucketDeltas(prev, reset, 'beacon_d', { endpoint: 'a' })).toBeNull()
  })

  test('derive: per-endpoint req/s, 5xx/s, p50/p99, cache hit ratio; HBase; access log', () => {
    const prev = math.parsePrometheusText([
      'beacon_http_requests_total{endpoint="sample3",status="200"} 100',
      histogram('beacon_http_request_duration_seconds', 'endpoint="sample3"', [80, 100, 100, 100, 100], 0.1),
      'beacon_config_lookups_total{endpoint="sample3",outcome="hit"} 90',
      'beacon_config_lookups_total{endpoint="sample3",outcome="miss"} 10',
      histogram('beacon_hbase_rpc_duration_seconds', 'method="Multi"', [0, 5, 10, 10, 10], 0.05),
      'beacon_access_log_entries_total{sink="hbase",state="accepted"} 100',
      'beacon_access_log_entries_total{sink="hbase",state="written"} 90',
      'beacon_access_log_entries_total{sink="hbase",state="spilled"} 0'
    ].join('\n'))
    const cur = math.parsePrometheusText([
      'beacon_http_requests_total{endpoint="sample3",status="200"} 300',
      'beacon_http_requests_total{endpoint="sample3",status="503"} 4', // new series: counts from 0
      'beacon_http_requests_total{endpoint="sample5",status="200"} 10',
      histogram('beacon_http_request_duration_seconds', 'endpoint="sample3"', [80, 300, 304, 304, 304], 0.6),
      'beacon_config_lookups_total{endpoint="sample3",outcome="hit"} 240',
      'beacon_config_lookups_total{endpoint="sample3",outcome="stale"} 30',
      'beacon_config_lookups_total{endpoint="sample3",outcome="miss"} 20',
      'beacon_config_lookups_total{endpoint="sample3",outcome="coalesced"} 20',
      'beacon_config_lookups_total{endpoint="sample3",outcome="refresh_error"} 7', // not a lookup
      histogram('beacon_hbase_rpc_duration_seconds', 'method="Multi"', [0, 25, 30, 30, 30], 0.1),
      'beacon_hbase_rpc_errors_total{method="Multi",code="HBASE_CALL_TIMEOUT"} 4',
      'beacon_access_log_entries_total{sink="hbase",state="accepted"} 300',
      'beacon_access_log_entries_total{sink="hbase",state="written"} 250',
      'beacon_access_log_entries_total{sink="hbase",state="spilled"} 20',
      'beacon_access_log_queue_depth{sink="hbase"} 12',
      'beacon_access_log_pending{sink="hbase"} 30',
      'beacon_access_log_journal_pending{sink="hbase"} 20',
      'beacon_access_log_oldest_pending_seconds{sink="hbase"} 1.5',
      'beacon_config_cache_entries{endpoint="sample3"} 7',
      'beacon_config_cache_entries{endpoint="sample5"} 5'
    ].join('\n'))
    const view = math.derive(prev, cur, 2)
    expect(view.cachedConfigs).toBe(12) // every endpoint's, every worker's (the primary sums those)
    expect(math.derive(cur, prev, 2).cachedConfigs).toBeNull() // no cache: unknown, not 0

    const s3 = view.endpoints.find((e) => e.endpoint === 'sample3')
    expect(s3.rps).toBe(102) // (304 - 100) / 2 s
    expect(s3.errorRps).toBe(2)
    expect(s3.total).toBe(304)
    // Interval buckets: 0 below 1 ms, 200 in 1..5 ms, 4 in 5..10 ms; 204 in all.
    expect(s3.p50).toBeCloseTo(0.001 + 0.004 * (102 / 200), 12)
    expect(s3.p99).toBeCloseTo(0.005 + 0.005 * ((0.99 * 204 - 200) / 4), 12)
    // Hits 150 + stale 30 = 180 from cache; miss 10 + coalesced 20 = 30 waited for HBase.
    expect(s3.hitRatio).toBeCloseTo(180 / 210, 12)

    const s5 = view.endpoints.find((e) => e.endpoint === 'sample5')
    expect(s5).toMatchObject({ rps: 5, errorRps: 0, hitRatio: null })
    expect(s5.p99).toBeNull() // no latency series for it in this scrape

    expect(view.hbase).toEqual([{ method: 'Multi', rps: 10, p50: expect.any(Number), p99: expect.any(Number), errorRps: 2, errors: 4 }])
    expect(view.hbase[0].p50).toBeCloseTo(0.001 + 0.004 * (10 / 20), 12)
    expect(view.hbaseErrorsByCode).toEqual([{ code: 'HBASE_CALL_TIMEOUT', total: 4 }])
    expect(view.accessLog).toEqual([expect.objectContaining({
      sink: 'hbase',
      acceptedRps: 100,
      writtenRps: 80,
      spilledRps: 10,
      spilledTotal: 20,
      shedTotal: 0,
      queueDepth: 12,
      pending: 30,
      journalPending: 20,
      oldestPendingSeconds: 1.5
    })])
  })
})

describe('the page', () => {
  let app

  beforeAll(async () => {
    app = await startBeacon()
  })

  afterAll(async () => {
    if (app) await app.close()
  })

  test('page and assets are served from the admin port with their types, a strict CSP and nosniff', async () => {
    const expected = {
      '/dashboard': /^text\/html/,
      '/dashboard/assets/dashboard.js': /javascript/,
      '/dashboard/assets/metrics-math.js': /javascript/,
      '/dashboard/assets/uPlot.iife.min.js': /javascript/,
      '/dashboard/assets/dashboard.css': /^text\/css/,
      '/dashboard/assets/uPlot.min.css': /^text\/css/
    }
    for (const [route, type] of Object.entries(expected)) {
      const res = await request(`${app.adminUrl}${route}`)
      expect({ route, status: res.status }).toEqual({ route, status: 200 })
      expect(res.headers['content-type']).toMatch(type)
      expect(res.headers['x-content-type-options']).toBe('nosniff')
      const csp = res.headers['content-security-policy']
      expect(csp).toMatch(/(^|; )default-src 'none'(;|$)/)
      expect(csp).toMatch(/(^|; )script-src 'self'(;|$)/)
      expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/)
      expect(res.body.length).toBeGreaterThan(100)
    }
    // uPlot comes from node_modules, byte for byte: no CDN.
    const uplot = await request(`${app.adminUrl}/dashboard/assets/uPlot.iife.min.js`)
    expect(uplot.body).toBe(fs.readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8'))
    // The page itself: no inline script or style, nothing from another origin.
    const page = (await request(`${app.adminUrl}/dashboard`)).body
    expect(page).not.toMatch(/<script(?![^>]*\bsrc=)/)
    expect(page).not.toMatch(/\sstyle=|<style|\son[a-z]+=/i)
    expect(page).not.toMatch(/(src|href)="(https?:)?\/\//)
  })

  test('only the listed assets exist; the public port has no dashboard', async () => {
    for (const route of [
      '/dashboard/assets/nope.js', '/dashboard/assets/..%2f..%2fpackage.json', '/dashboard/assets/index.html', '/dashboard/assets/__proto__'
    ]) {
      const res = await request(`${app.adminUrl}${route}`)
      expect({ route, status: res.status }).toEqual({ route, status: 404 })
    }
    expect((await request(`${app.url}/dashboard`)).status).toBe(404)
  })

  test('in headless Chromium at idle: every chart drawn, its tick labels round, distinct and inside the axis', async () => {
    const browser = await chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox'] })
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } })
      await page.goto(`${app.adminUrl}/dashboard`)
      await page.waitForFunction(() => Number(document.body.dataset.updates) >= 4, null, { timeout: 15000 })
      await expectChartsReadable(page, 'at idle')
      // Every span a chart goes through (the live ones fill 120 one-second points, the traffic
      // ones 60 minutes) at widths from the narrowest chart to a wide screen, drawn by the page's
      // own uPlot and axes: no two time labels touch.
      const drawn = await page.evaluate(async () => {
        const context = document.createElement('canvas').getContext('2d')
        context.font = window.BeaconAxes.FONT
        const out = []
        for (const width of [240, 300, 420, 560, 700, 960, 1400]) {
          for (const [byMinute, points] of [[false, 120], [true, 60]]) {
            for (let n = 2; n <= points; n++) {
              const el = document.createElement('div')
              document.body.appendChild(el)
              const step = byMinute ? 60 : 1
              const start = Math.floor(Date.now() / 60000) * 60 - n * step
              const times = Array.from({ length: n }, (_, i) => start + i * step)
              const u = new window.uPlot({ // eslint-disable-line new-cap -- the library's own name
                width,
                height: 180,
                scales: { x: { time: true } },
                series: [{}, { label: 'a' }],
                axes: window.BeaconAxes.timeSeriesAxes(el, { counts: byMinute, byMinute })
              }, [times, times.map((t, i) => i)], el)
              await new Promise((resolve) => window.queueMicrotask(resolve)) // uPlot draws in a microtask
              const x = JSON.parse(el.dataset.ticksX || '[]')
              out.push({
                width,
                n,
                byMinute,
                x,
                xAt: JSON.parse(el.dataset.ticksXAt || '[]'),
                xWidths: x.map((label) => context.measureText(label).width)
              })
              u.destroy()
              el.remove()
            }
          }
        }
        return out
      })
      expect(drawn.length).toBe(7 * (119 + 59))
      expect(drawn.filter((d) => d.x.length === 0).map((d) => `${d.width} px, ${d.n} points`)).toEqual([])
      const touching = drawn
        .map((d) => ({ chart: `${d.width} px, ${d.n} points${d.byMinute ? ' by minute' : ''}`, labels: overlappingTimeLabels(d) }))
        .filter((d) => d.labels.length > 0)
      expect(touching).toEqual([])

      // The traffic charts' scale: after a spike of 45,000 a minute, 40 a minute still draws well
      // above the zero line (on a linear scale it would be 0.06% of the height), its axis labelled.
      const quiet = await page.evaluate(async () => {
        const el = document.createElement('div')
        document.body.appendChild(el)
        const start = Math.floor(Date.now() / 60000) * 60 - 3600
        const times = Array.from({ length: 60 }, (_, i) => start + i * 60)
        const u = new window.uPlot({ // eslint-disable-line new-cap -- the library's own name
          width: 600,
          height: 180,
          scales: { x: { time: true }, y: window.BeaconAxes.logCountScale() },
          series: [{}, { label: 'a' }],
          axes: window.BeaconAxes.timeSeriesAxes(el, { counts: true, byMinute: true, log: true })
        }, [times, times.map((t, i) => (i === 5 ? 45000 : 40))], el)
        await new Promise((resolve) => window.queueMicrotask(resolve))
        const zero = u.valToPos(0, 'y')
        const result = { share: (zero - u.valToPos(40, 'y')) / (zero - u.valToPos(u.scales.y.max, 'y')), y: JSON.parse(el.dataset.ticksY) }
        u.destroy()
        el.remove()
        return result
      })
      expect(quiet.share).toBeGreaterThan(0.25)
      expect(quiet.y[0]).toBe('0')
      expect(quiet.y).toEqual(expect.arrayContaining(['10', '1k'])) // as many decades as 180 px label
    } finally {
      await browser.close()
    }
  })

  test('in headless Chromium the numbers move while traffic flows', async () => {
    const executablePath = chromiumPath()
    const flow = { on: true, sent: 0 }
    // Every id the flow asks sample3 for is cached first, so its hit ratio is above 0 from the
    // first poll that sees traffic, however slowly a loaded machine sends it (the first hit of
    // a cold cache came only after 200 rounds).
    for (let id = 1; id <= 400; id++) expect((await request(`${app.url}/api/sample3.js?id=${id}&callback=cb`)).status).toBe(200)
    // Steady traffic on two endpoints (sample5 also feeds the HBase access log); a short pause
    // per round leaves CPU for HBase and the browser on a small machine.
    const traffic = (async () => {
      for (let i = 0; flow.on; i++) {
        const id = (i % 200) + 1
        await Promise.all([
          request(`${app.url}/api/sample3.js?id=${id}&callback=cb`),
          request(`${app.url}/api/sample3.js?id=${id + 200}&callback=cb`),
          request(`${app.url}/api/sample5.js?id=${id}&callback=cb`)
        ])
        flow.sent += 3
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
    })()

    const browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] })
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } })
      // Every time axis each chart draws while the load runs, from the page's first poll: the
      // labels once ran together 8 s and 17 s in, between the fixed moments checked below.
      await page.addInitScript(() => {
        window.axesSeen = []
        new MutationObserver((changes) => {
          for (const change of changes) {
            const el = /** @type {HTMLElement} */ (change.target)
            window.axesSeen.push({ id: el.id, updates: document.body.dataset.updates, x: el.dataset.ticksX, xAt: el.dataset.ticksXAt })
          }
        }).observe(document, { subtree: true, attributes: true, attributeFilter: ['data-ticks-x-at'] })
      })
      const problems = []
      page.on('pageerror', (err) => problems.push(`page error: ${err.message}`))
      page.on('console', (msg) => {
        if (msg.type() === 'error' || msg.type() === 'warning') problems.push(`console ${msg.type()}: ${msg.text()}`)
      })
      page.on('requestfailed', (req) => problems.push(`request failed: ${req.url()} ${req.failure().errorText}`))
      page.on('response', (res) => { if (res.status() >= 400) problems.push(`HTTP ${res.status()} for ${res.url()}`) })

      await page.goto(`${app.adminUrl}/dashboard`)
      const cell = (row, field) => `#endpoints tr[data-endpoint="${row}"] [data-field="${field}"]`
      const number = async (selector) => parseFloat(await page.textContent(selector))

      await page.waitForFunction(() => document.getElementById('hbase').textContent === 'reachable', null, { timeout: 10000 })
      await page.waitForFunction((sel) => parseFloat(document.querySelector(sel)?.textContent) > 0, cell('sample3', 'rps'), {
        timeout: 10000
      })
      const first = await number(cell('sample3', 'rps'))
      expect(first).toBeGreaterThan(0)
      // The next polls show another rate: the page keeps updating, it did not render once.
      await page.waitForFunction(([sel, before]) => {
        const now = parseFloat(document.querySelector(sel).textContent)
        return now > 0 && now !== before
      }, [cell('sample3', 'rps'), first], { timeout: 10000 })
      expect(await number(cell('sample3', 'rps'))).toBeGreaterThan(0)
      expect(await number(cell('sample5', 'rps'))).toBeGreaterThan(0)
      expect(await number(cell('sample3', 'p99'))).toBeGreaterThan(0)
      expect(await number(cell('sample3', 'total'))).toBeGreaterThan(0)
      await page.waitForFunction((sel) => parseFloat(document.querySelector(sel).textContent) > 0, cell('sample3', 'hitRatio'), {
        timeout: 5000
      })
      await page.waitForFunction(
        () => parseFloat(document.querySelector('#access-log tr[data-sink="hbase"] [data-field="writtenRps"]')?.textContent) > 0,
        null,
        { timeout: 10000 }
      )
      expect(await page.textContent('#access-log tr[data-sink="hbase"] [data-field="state"]')).toBe('ok')
      expect(await page.locator('#hbase-rpc tbody tr').count()).toBeGreaterThan(0)
      expect(await page.locator('section:not(#traffic) .uplot canvas').count()).toBe(4)
      expect(await page.isHidden('#problem')).toBe(true)

      // A few more updates so the screenshot shows lines, not two points.
      const updates = Number(await page.getAttribute('body', 'data-updates'))
      await page.waitForFunction((n) => Number(document.body.dataset.updates) >= n, updates + 4, { timeout: 10000 })
      fs.mkdirSync(OUTPUT_DIR, { recursive: true })
      await page.screenshot({ path: path.join(OUTPUT_DIR, 'dashboard.png'), fullPage: true })
      await expectChartsReadable(page, 'under load')
      // Twenty updates at least, so the live charts went through each span of their first 20 s.
      await page.waitForFunction(() => Number(document.body.dataset.updates) >= 20, null, { timeout: 30000 })
      const seen = await page.evaluate(() => {
        const context = document.createElement('canvas').getContext('2d')
        context.font = window.BeaconAxes.FONT
        return window.axesSeen.map((s) => {
          const x = JSON.parse(s.x || '[]')
          return { ...s, x, xAt: JSON.parse(s.xAt), xWidths: x.map((label) => context.measureText(label).width) }
        })
      })
      for (const id of CHARTS) {
        const drawn = seen.filter((s) => s.id === id).length
        expect({ id, drawn, enough: drawn >= 15 }).toEqual({ id, drawn, enough: true })
      }
      expect(seen.map((s) => ({ chart: `${s.id} at update ${s.updates}`, labels: overlappingTimeLabels(s) }))
        .filter((s) => s.labels.length > 0)).toEqual([])
      // With the pointer off the charts, each legend shows its latest point (no '–' for a series
      // that has points), its time in 24-hour clock like the axes.
      await page.mouse.move(0, 0)
      const legends = await page.evaluate(() => [...document.querySelectorAll('#chart-rps .u-legend .u-series')]
        .map((row) => [row.querySelector('.u-label')?.textContent ?? '', row.querySelector('.u-value')?.textContent ?? '']))
      expect(legends.length).toBeGreaterThan(1)
      expect(legends[0][1]).toMatch(/^([01]\d|2[0-3]):[0-5]\d:[0-5]\d$/)
      for (const [label, value] of legends.slice(1)) expect([label, value]).toEqual([label, expect.stringMatching(/^\d/)])
      expect(problems).toEqual([])
    } finally {
      flow.on = false
      await traffic
      await browser.close()
    }
    expect(flow.sent).toBeGreaterThan(0)
  })
})

test('in headless Chromium, a host without rollups: the traffic view says nothing is counted, not that nothing came', async () => {
  const token = 'dashboard-rollups-off-0123456789abcdef'
  const off = await startBeacon({ env: { BEACON_ADMIN_TOKEN: token }, overrides: { logSinks: { hbase: { rollups: false } } } })
  const browser = await chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox'] })
  try {
    const page = await browser.newPage()
    await page.addInitScript((t) => window.sessionStorage.setItem('beacon-admin-token', t), token)
    await page.goto(`${off.adminUrl}/dashboard`)
    await page.waitForFunction(() => /no access-log rollups/.test(document.getElementById('traffic-status').textContent), null,
      { timeout: 15000 })
    expect(await page.locator('#top-ids + .empty').textContent()).toBe('Not counted: this host keeps no access-log rollups.')
    expect(await page.locator('#token-box').isHidden()).toBe(true)
  } finally {
    await browser.close()
    await off.close()
  }
})
