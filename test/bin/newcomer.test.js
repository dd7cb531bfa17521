'use strict'

// A newcomer's first minutes, as README's quick start has them: `npm start` (server.js) with no
// admin token anywhere in its environment, a few page views, then `npx beacon log count` in a
// second shell that has no token either. The server creates the token in its state dir (mode
// 0600) and says where; the CLI on the same machine reads it.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFile } = require('node:child_process')
const { startServerProcess } = require('../support/server-process')
const { testClient, uniqueTable } = require('../support/hbase')
const { freePorts } = require('../support/ports')
const { request } = require('../support/beacon')
const { accessLogSplitKeys } = require('../../logging/access-log-layout')
const { until } = require('../support/until')

jest.setTimeout(3 * 60 * 1000)

const CLI = path.join(__dirname, '..', '..', 'bin', 'beacon.js')
const VIEWS = 7
const ID = `newcomer${process.pid}`
// Nothing the developer running the tests has set may stand in for what the server creates.
const NO_TOKEN = { BEACON_ADMIN_TOKEN: '', BEACON_ADMIN_TOKEN_FILE: '', BEACON_ADMIN_URL: '' }

let admin
let table
let stateDir

beforeAll(async () => {
  admin = testClient()
  table = uniqueTable('newc')
  await admin.admin.createTable(table, { families: ['l'], splits: accessLogSplitKeys(16, 4) })
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-newcomer-'))
})

afterAll(async () => {
  await admin.admin.deleteTable(table).catch(() => {})
  await admin.close()
  fs.rmSync(stateDir, { recursive: true, force: true })
})

/** The CLI in "a second shell": PATH, the admin port and the state dir, nothing else. */
function cli (args, env) {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH, ...env }, timeout: 30000 }, (err, stdout, stderr) => {
      resolve({ code: err ? err.code : 0, stdout, stderr })
    })
  })
}

test('npm start with no token, then `beacon log count` in a second shell works with no setup', async () => {
  // Both ports free ones: the admin port is not left to port + 1, which another process may hold.
  const [port, adminPort] = await freePorts(2)
  const lines = []
  const server = await startServerProcess({
    port,
    adminPort,
    stateDir,
    env: { ...NO_TOKEN, BEACON_ACCESS_LOG_TABLE: table },
    log: (line) => lines.push(line)
  })
  try {
    const tokenFile = path.join(stateDir, 'admin-token')
    await until('the ready banner', () => lines.some((l) => l.includes('beacon is ready')), 30000)
    expect(lines.join('\n')).toContain(`admin token: ${tokenFile} (created, mode 0600; the CLI on this machine reads it)`)
    expect(fs.statSync(tokenFile).mode & 0o777).toBe(0o600)
    // The banner's CLI commands work as printed, from a shell with nothing else set: this
    // server's admin port and state dir are not the defaults, so it prints them.
    const printed = /CLI: +(.*?)npx beacon status;/.exec(lines.find((l) => l.includes('CLI:')) || '')
    expect(printed).not.toBeNull()
    const printedEnv = Object.fromEntries(String(printed?.[1]).trim().split(/ +/).map((pair) => pair.split('=')))
    expect(printedEnv).toEqual({ BEACON_ADMIN_URL: `http://127.0.0.1:${adminPort}`, BEACON_STATE_DIR: stateDir })
    expect(await cli(['status'], printedEnv)).toMatchObject({ code: 0, stderr: '' })

    for (let i = 0; i < VIEWS; i++) {
      expect((await request(`http://127.0.0.1:${port}/api/sample5.js?id=${ID}&callback=cb`)).status).toBe(200)
    }
    const shell = { ADMIN_PORT: String(adminPort), BEACON_STATE_DIR: stateDir }
    let res
    await until(`${VIEWS} views counted`, async () => {
      res = await cli(['log', 'count', '--from', '-10m', '--id', ID, '--json'], shell)
      return res.code === 0 && JSON.parse(res.stdout).total === VIEWS
    }, 20000, 500)
    expect(res.stderr).toBe('')

    // The admin API still wants the token: a second shell whose state dir is elsewhere has none.
    const elsewhere = await cli(['log', 'count', '--from', '-10m', '--id', ID], { ...shell, BEACON_STATE_DIR: path.join(stateDir, 'none') })
    expect(elsewhere.code).toBe(2)
    expect(elsewhere.stderr).toMatch(/401: a valid bearer token is required/)
  } finally {
    const code = await server.stop()
    if (code !== 0) console.log(`the server exited ${code}; its last lines:\n${lines.slice(-40).join('\n')}`)
    expect(code).toBe(0)
  }
})
