'use strict'
/* global document -- used inside callbacks that run in the page */

// The dashboard's fleet-wide traffic view (api/admin/traffic.js, api/admin/dashboard/traffic.js) in a real
// headless Chromium: two beacon processes (`server.js`) write one access log in the real HBase;
// the page on one of them shows the requests of both, read from the rollups.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { chromium } = require('playwright-core')
const { chartAxes, expectReadableAxes } = require('../support/chart-axes')
const { startServerProcess } = require('../support/server-process')
const { freePorts } = require('../support/ports')
const { request } = require('../support/beacon')
const { testClient, uniqueTable, bootstrap } = require('../support/hbase')
const { rollupsAgainstRaw } = require('../support/rollups')
const { until } = require('../support/until')
const { accessLogSplitKeys, ACCESS_LOG_FAMILY } = require('../../logging/access-log-layout')

jest.setTimeout(3 * 60 * 1000)

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium'
const OUTPUT_DIR = path.join(__dirname, '..', '..', 'test-output')
let client
let table
const servers = []
const dirs = []

beforeAll(async () => {
  client = testClient()
  table = uniqueTable('traffic')
  await client.admin.createTable(table, { families: [ACCESS_LOG_FAMILY], splits: accessLogSplitKeys(16, 4) })
})

afterAll(async () => {
  for (const server of servers) await server.stop(20000)
  await client.admin.deleteTable(table).catch(() => {})
  await client.close()
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
})

async function host () {
  const [port, adminPort] = await freePorts(2)
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-traffic-'))
  dirs.push(stateDir)
  const server = await startServerProcess({
    port,
    adminPort,
    stateDir,
    env: { BEACON_ACCESS_LOG_TABLE: table, BEACON_WORKERS: '1', BEACON_ACCESS_ROLLUPS: '1' }
  })
  servers.push(server)
  // npm start's own token: the one the CLI reads, and the page asks for.
  const token = fs.readFileSync(path.join(stateDir, 'admin-token'), 'utf8').trim()
  return { url: `http://127.0.0.1:${port}`, admin: `http://127.0.0.1:${adminPort}`, token }
}

test('two beacon processes, one access log: the dashboard of either shows the requests of both, per minute and by id, as the rollups ' +
  'count them', async () => {
  const started = Date.now()
  const [a, b] = await Promise.all([host(), host()])
  // id 7 most requested; the others spread; sample4 is not in the HBase log and must not show.
  const plan = [[a, 300], [b, 200]]
  const expectedById = new Map()
  const botsById = new Map()
  // Half from a browser; the rest from a crawler or with no agent (logging/bot-agent.js).
  const agents = ['Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0', 'Mozilla/5.0 (compatible; Googlebot/2.1)', null]
  let bots = 0
  for (const [h, n] of plan) {
    for (let i = 0; i < n; i++) {
      const id = i % 5 === 0 ? '7' : String(10 + (i % 13))
      const ua = agents[i % 4 % 3]
      const headers = ua ? { 'user-agent': ua } : {}
      expect((await request(`${h.url}/api/sample5.js?id=${id}&callback=cb`, { headers })).status).toBe(200)
      expectedById.set(id, (expectedById.get(id) || 0) + 1)
      if (ua !== agents[0]) {
        bots++
        botsById.set(id, (botsById.get(id) || 0) + 1)
      }
      if (i % 10 === 0) expect((await request(`${h.url}/api/sample4.js?id=${id}&callback=cb`)).status).toBe(200)
    }
  }
  await until('every sample5 a row', async () => (await client.count(table)) === 500, 30000)
  // Count every minute now, the one in progress too (the hosts' own rollers would wait for it to end).
  const rollups = await rollupsAgainstRaw({ bootstrap: bootstrap(), logTable: table, from: started - 60000 })
  expect(rollups).toMatchObject({ rows: 500, marked: [], differences: [] })

  const top = [...expectedById].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1))
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } })
    const problems = []
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`))
    await page.goto(`${a.admin}/dashboard`)
    // The traffic lists visitor ids: the page asks for the token first, and shows nothing of it.
    await page.locator('#token-box').waitFor({ state: 'visible', timeout: 30000 })
    expect(await page.locator('#top-ids tbody tr').count()).toBe(0)
    expect(await page.locator('#traffic-status').textContent()).toContain('needs the admin token')
    await page.locator('#token-input').fill('not-the-token-0123456789abcdefghijkl')
    await page.locator('#token-save').click()
    await page.waitForFunction(() => document.getElementById('token-note').textContent === 'That token was refused.', null,
      { timeout: 30000 })
    await page.locator('#token-input').fill(a.token)
    await page.locator('#token-save').click()
    await page.waitForFunction(() => document.getElementById('traffic-status').dataset.total === '500', null, { timeout: 30000 })
    expect(await page.locator('#token-box').isHidden()).toBe(true)
    const shown = await page.evaluate(() => ({
      status: document.getElementById('traffic-status').textContent,
      rows: [...document.querySelectorAll('#top-ids tbody tr')].map((tr) => [
        tr.dataset.id,
        tr.cells[1].textContent,
        tr.cells[2].textContent,
        tr.cells[3].textContent
      ]),
      charted: document.querySelectorAll('#chart-traffic canvas').length,
      whoCharted: document.querySelectorAll('#chart-who canvas').length
    }))
    expect(bots).toBeGreaterThan(0)
    const split = `(${500 - bots} from people, ${bots} from bots)`
    expect(shown.status.startsWith(`500 requests counted in the last hour on every host ${split}`)).toBe(true)
    expect(shown.rows).toHaveLength(10)
    expect(shown.rows[0]).toEqual(['7', String(expectedById.get('7')), String(botsById.get('7') || 0), `sample5 ${expectedById.get('7')}`])
    expect(shown.rows.map((r) => [r[0], Number(r[1])])).toEqual(top.slice(0, 10))
    expect(shown.charted).toBeGreaterThan(0)
    expect(shown.whoCharted).toBeGreaterThan(0)
    expectReadableAxes('chart-traffic', await chartAxes(page, 'chart-traffic'), { counts: true })
    expectReadableAxes('chart-who', await chartAxes(page, 'chart-who'), { counts: true })
    expect(problems).toEqual([])
    fs.mkdirSync(OUTPUT_DIR, { recursive: true })
    await page.locator('#traffic').screenshot({ path: path.join(OUTPUT_DIR, 'dashboard-traffic.png') })
    // The other host's page reads the same rollups.
    expect((await fetch(`${b.admin}/dashboard/traffic`)).status).toBe(401)
    const other = await (await fetch(`${b.admin}/dashboard/traffic`, { headers: { Authorization: `Bearer ${b.token}` } })).json()
    expect(other.minutes.reduce((n, m) => n + (m.endpoints.sample5 || 0), 0)).toBe(500)
    expect(other.minutes.every((m) => !('sample4' in m.endpoints))).toBe(true)
    expect(other.minutes.reduce((n, m) => n + (m.bots.sample5 || 0), 0)).toBe(bots)
  } finally {
    await browser.close()
  }
})
