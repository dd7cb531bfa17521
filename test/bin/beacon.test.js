'use strict'

// The CLI as a user runs it: `node bin/beacon.js ...` in a child process against real beacons
// (one on the test HBase with an admin token, one whose HBase is unreachable), checking what it
// prints and its exit codes: 0 ok, 1 usage, 2 server or auth error.

const fs = require('node:fs')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')
const { execFile } = require('node:child_process')
const { PassThrough } = require('node:stream')
const { startBeacon } = require('../support/beacon')
const { testClient, uniqueTable } = require('../support/hbase')
const { loadSettings } = require('../../config')
const { createBeacon } = require('../../api')
const { createLogger } = require('../../logging/logger')

const CLI = path.join(__dirname, '..', '..', 'bin', 'beacon.js')
const VERSION = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')).version
const TOKEN = 'cli-token-0123456789-0123456789abc'
const ID = `cli${process.pid}`
const CONFIG_TABLE = uniqueTable('cfg')
const COMMANDS = [
  'config get', 'config set', 'config delete', 'config list', 'endpoint list', 'endpoint enable', 'endpoint disable', 'status'
]

// A state dir of its own, so that no token `npm start` left in the checkout's is read.
const STATE_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-cli-state-'))

let app, down, deadUrl

/**
 * Runs the CLI with only the environment given (plus PATH and an empty state dir).
 * @returns {Promise<{ code: number, stdout: string, stderr: string }>}
 */
function cli (args, env = {}) {
  return new Promise((resolve) => {
    const childEnv = { PATH: process.env.PATH, BEACON_STATE_DIR: STATE_DIR, ...env }
    execFile(process.execPath, [CLI, ...args], { env: childEnv, timeout: 20000 }, (err, stdout, stderr) => {
      resolve({ code: err ? err.code : 0, stdout, stderr })
    })
  })
}

function freePort () {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (server.address())
      server.close(() => resolve(port))
    })
  })
}

/** A real beacon whose HBase does not answer: /readyz says not ready. */
async function beaconWithoutHBase () {
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-cli-'))
  const settings = loadSettings({
    env: { BEACON_STATE_DIR: stateDir },
    overrides: {
      port: 0,
      adminPort: 0,
      host: '127.0.0.1',
      hbase: { bootstrap: [`127.0.0.1:${await freePort()}`], rpcTimeoutMs: 200, operationTimeoutMs: 400, controlPollMs: 0 },
      endpoints: { sample4: null, sample5: null } // no access-log sinks
    }
  })
  const beacon = createBeacon(settings, { logger: createLogger({ level: 'silent', destination: new PassThrough() }) })
  const { adminPort } = await beacon.listen()
  return {
    adminUrl: `http://127.0.0.1:${adminPort}`,
    async close () {
      await beacon.close({ timeoutMs: 2000 })
      fs.rmSync(stateDir, { recursive: true, force: true })
    }
  }
}

beforeAll(async () => {
  const admin = testClient()
  await admin.admin.createTable(CONFIG_TABLE, { families: ['c'] })
  await admin.close()
  app = await startBeacon({ env: { BEACON_ADMIN_TOKEN: TOKEN }, overrides: { hbase: { configTable: CONFIG_TABLE } } })
  down = await beaconWithoutHBase()
  deadUrl = `http://127.0.0.1:${await freePort()}`
})

afterAll(async () => {
  if (app) await app.close()
  if (down) await down.close()
  const admin = testClient()
  await admin.admin.deleteTable(CONFIG_TABLE).catch(() => {})
  await admin.close()
  fs.rmSync(STATE_DIR, { recursive: true, force: true })
})

test('--help, -h and help: every command, exit 0, nothing asked of a server', async () => {
  const general = await cli(['--help'], { BEACON_ADMIN_URL: deadUrl })
  expect(general.code).toBe(0)
  expect(general.stdout).toMatch(/^usage: beacon <command> \[options\]/)
  for (const words of COMMANDS) expect(general.stdout).toContain(`  ${words}`)
  expect(general.stdout).toMatch(/exit codes: 0 ok, 1 usage error, 2 server or auth error/)
  expect((await cli(['-h'])).stdout).toBe(general.stdout)
  expect((await cli(['help'])).stdout).toBe(general.stdout)
  for (const words of COMMANDS) {
    for (const flag of ['--help', '-h']) {
      const res = await cli([...words.split(' '), flag], { BEACON_ADMIN_URL: deadUrl })
      expect({ words, flag, code: res.code, stderr: res.stderr }).toEqual({ words, flag, code: 0, stderr: '' })
      expect(res.stdout).toMatch(new RegExp(`^usage: beacon ${words}`))
      expect(res.stdout).toContain('--url <url>')
    }
  }
  for (const area of ['config', 'endpoint']) {
    const res = await cli([area, '--help'])
    expect(res.code).toBe(0)
    expect(res.stdout).toContain(`beacon ${area} list`)
  }
})

test('--version prints the package version', async () => {
  expect(await cli(['--version'])).toEqual({ code: 0, stdout: VERSION + '\n', stderr: '' })
})

test.each([
  ['no command', [], /usage: beacon <command>/],
  ['an unknown command', ['nope'], /unknown command "nope"; beacon --help lists the commands/],
  ['an unknown action', ['config', 'nope'], /unknown command "config nope"/],
  ['an area alone', ['endpoint'], /endpoint needs a command:\n {2}beacon endpoint list/],
  ['a missing argument', ['config', 'get'], /usage: beacon config get <id>/],
  ['an argument too many', ['config', 'delete', 'a', 'b'], /usage: beacon config delete <id>/],
  ['an unknown option', ['status', '--bogus'], /Unknown option '--bogus'\nusage: beacon status \[--json\]$/m],
  ['an option without its value', ['config', 'list', '--limit'], /argument missing/],
  ['malformed JSON', ['config', 'set', 'x', '{bad'], /the toggles are not valid JSON/],
  ['a missing file', ['config', 'set', 'x', '@/nonexistent/file.json'], /cannot read \/nonexistent\/file\.json: ENOENT/]
])('usage error, exit 1: %s', async (name, args, message) => {
  // The server is never asked: a dead URL would make any call exit 2.
  const res = await cli(args, { BEACON_ADMIN_URL: deadUrl, BEACON_ADMIN_TOKEN: TOKEN })
  expect(res.code).toBe(1)
  expect(res.stdout).toBe('')
  expect(res.stderr).toMatch(/^beacon: /)
  expect(res.stderr).toMatch(message)
})

test('status: one line per check, no token needed; --json; --url and ADMIN_PORT find the host', async () => {
  const res = await cli(['status'], { BEACON_ADMIN_URL: app.adminUrl })
  expect(res.code).toBe(0)
  const lines = res.stdout.trimEnd().split('\n')
  expect(lines[0]).toBe(`ready  ${app.adminUrl}`)
  const retention = lines.indexOf('  retention')
  const checks = lines.slice(1, retention).map((l) => l.trim().split(/\s+/)[0]).sort()
  expect(checks).toEqual(['accessLog.file', 'accessLog.hbase', 'cachedConfigs', 'hbase', 'rollups'])
  // After the checks, how long the access log is kept (the test's table has no TTL).
  expect(lines.slice(retention + 1)).toEqual([
    expect.stringMatching(/^ {4}t_alog_\S+ +forever {2}\(the settings say 90d: beacon log retention --set… applies it\)$/),
    expect.stringMatching(/^ {4}beacon_access_rollup +\S+/)
  ])
  expect(lines).toContainEqual(expect.stringMatching(/^ {2}hbase +reachable$/))
  expect(lines).toContainEqual(expect.stringMatching(/^ {2}accessLog\.hbase +ok$/))

  const json = await cli(['status', '--json'], { BEACON_ADMIN_URL: deadUrl })
  expect(json.code).toBe(2) // the dead URL: --url was not given
  const viaUrl = await cli(['status', '--json', '--url', app.adminUrl], { BEACON_ADMIN_URL: deadUrl })
  expect(viaUrl.code).toBe(0)
  expect(JSON.parse(viaUrl.stdout)).toMatchObject({ status: 'ready', checks: { hbase: 'reachable' }, url: app.adminUrl })
  const viaPort = await cli(['status'], { ADMIN_PORT: new URL(app.adminUrl).port })
  expect(viaPort.code).toBe(0)
  expect(viaPort.stdout).toMatch(/^ready {2}http:\/\/127\.0\.0\.1:\d+\n/)
})

test('status of a host that is not ready: its checks, exit 2', async () => {
  const res = await cli(['status', '--url', down.adminUrl])
  expect(res.code).toBe(2)
  expect(res.stdout).toMatch(new RegExp(`^not ready {2}${down.adminUrl}\n`))
  expect(res.stdout).toMatch(/^ {2}hbase +unreachable \(HBASE_/m)
  expect(res.stdout).toMatch(/^ {2}cachedConfigs +0$/m)
})

test('server and auth errors exit 2: no token, a wrong token, an error answer, nobody listening', async () => {
  const noToken = await cli(['config', 'get', '1'], { BEACON_ADMIN_URL: app.adminUrl })
  expect(noToken).toMatchObject({ code: 2, stdout: '' })
  expect(noToken.stderr).toBe('beacon: 401: a valid bearer token is required (set BEACON_ADMIN_TOKEN or BEACON_ADMIN_TOKEN_FILE)\n')
  const wrong = await cli(['endpoint', 'list'], { BEACON_ADMIN_URL: app.adminUrl, BEACON_ADMIN_TOKEN: 'nope' })
  expect(wrong.code).toBe(2)
  expect(wrong.stderr).toMatch(/401: a valid bearer token is required \(check BEACON_ADMIN_TOKEN\)/)
  const missing = await cli(['config', 'get', 'no-such-id-cli'], { BEACON_ADMIN_URL: app.adminUrl, BEACON_ADMIN_TOKEN: TOKEN })
  expect(missing.code).toBe(2)
  expect(missing.stderr).toMatch(/404: no config stored for this id/)
  const nobody = await cli(['config', 'list'], { BEACON_ADMIN_URL: deadUrl, BEACON_ADMIN_TOKEN: TOKEN })
  expect(nobody.code).toBe(2)
  expect(nobody.stderr).toBe(`beacon: cannot reach ${deadUrl}: ECONNREFUSED\n`)
})

test('the token from BEACON_ADMIN_TOKEN_FILE, else from the state dir `npm start` keeps, else none', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-cli-token-'))
  try {
    fs.writeFileSync(path.join(dir, 'admin-token'), TOKEN + '\n', { mode: 0o600 })
    const fromState = await cli(['endpoint', 'list'], { BEACON_ADMIN_URL: app.adminUrl, BEACON_STATE_DIR: dir })
    expect(fromState).toMatchObject({ code: 0, stderr: '' })
    expect(JSON.parse(fromState.stdout).endpoints.map((e) => e.name)).toContain('sample5')

    fs.writeFileSync(path.join(dir, 'named'), 'a-wrong-token-0123456789abcdefghijklmnop\n')
    const named = { BEACON_ADMIN_URL: app.adminUrl, BEACON_STATE_DIR: dir, BEACON_ADMIN_TOKEN_FILE: path.join(dir, 'named') }
    const wins = await cli(['endpoint', 'list'], named) // the named file wins over the state dir's
    expect(wins.code).toBe(2)
    expect(wins.stderr).toMatch(/401: .*\(the token in .*named was refused: .*set BEACON_STATE_DIR /)
    expect(wins.stderr).toMatch(/BEACON_ADMIN_TOKEN_FILE or BEACON_ADMIN_TOKEN\)\n$/)
    const env = await cli(['endpoint', 'list'], { ...named, BEACON_ADMIN_TOKEN: TOKEN }) // the environment wins over both
    expect(env.code).toBe(0)

    const missing = await cli(['endpoint', 'list'], { ...named, BEACON_ADMIN_TOKEN_FILE: path.join(dir, 'none') })
    expect(missing).toMatchObject({ code: 2, stdout: '' })
    expect(missing.stderr).toMatch(/^beacon: cannot read the admin token file .*none: ENOENT\n$/)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('config list pages: `next` is a plain word to pass as --start, and no id comes twice', async () => {
  const env = { BEACON_ADMIN_URL: app.adminUrl, BEACON_ADMIN_TOKEN: TOKEN }
  const ids = ['a', 'a-', 'a0', 'b'].map((suffix) => `${ID}page${suffix}`)
  for (const id of ids) expect((await cli(['config', 'set', id, '{"p":1}'], env)).code).toBe(0)
  try {
    const seen = []
    let start = ids[0]
    for (let page = 0; page < 3 && start !== null; page++) {
      const out = JSON.parse((await cli(['config', 'list', '--start', start, '--limit', '2'], env)).stdout)
      seen.push(...out.ids.filter((/** @type {string} */ id) => id.startsWith(`${ID}page`)))
      if (out.next !== null) expect(out.next).toMatch(/^[A-Za-z0-9_-]+$/)
      start = out.next
    }
    expect(seen.slice(0, 4)).toEqual(ids)
  } finally {
    for (const id of ids) await cli(['config', 'delete', id], env)
  }
})

test('the existing commands, flags and env names still work (exit 0, JSON out)', async () => {
  const env = { BEACON_ADMIN_URL: app.adminUrl, BEACON_ADMIN_TOKEN: TOKEN }
  const file = path.join(app.stateDir, 'toggles.json')
  fs.writeFileSync(file, '{"features":{"cli":true}}')
  const set = await cli(['config', 'set', ID, `@${file}`], env)
  expect(set.code).toBe(0)
  expect(JSON.parse(set.stdout)).toEqual({ id: ID, config: { features: { cli: true } } })
  expect(JSON.parse((await cli(['config', 'get', ID], env)).stdout)).toMatchObject({ id: ID, config: { features: { cli: true } } })
  expect(JSON.parse((await cli(['config', 'list', '--start', ID, '--limit', '1'], env)).stdout).ids).toEqual([ID])
  expect(JSON.parse((await cli(['endpoint', 'disable', 'sample2'], env)).stdout)).toEqual({ endpoint: 'sample2', enabled: false })
  expect(JSON.parse((await cli(['endpoint', 'list'], env)).stdout).endpoints).toContainEqual({ name: 'sample2', enabled: false })
  expect(JSON.parse((await cli(['endpoint', 'enable', 'sample2'], env)).stdout)).toEqual({ endpoint: 'sample2', enabled: true })
  expect(await cli(['config', 'delete', ID], env)).toEqual({
    code: 0,
    stdout: JSON.stringify({ id: ID, deleted: true }, null, 2) + '\n',
    stderr: ''
  })
})

test('errors that say the fix: a time without its minus, an endpoint no setting has, the public port, a dot in an id', async () => {
  const env = { BEACON_ADMIN_URL: app.adminUrl, BEACON_ADMIN_TOKEN: TOKEN }
  const noMinus = await cli(['log', 'count', '--from', '10m'], env)
  expect(noMinus).toMatchObject({ code: 1, stdout: '' })
  expect(noMinus.stderr).toMatch(/^beacon: --from takes ISO-8601 .*, or a time relative to now \(-30s, .*\); /)
  expect(noMinus.stderr).toMatch(/; 10m is a length of time: 10m ago is -10m\n/)
  expect(noMinus.stderr).not.toMatch(/400/)
  expect((await cli(['log', 'scan', '--from', '-1h', '--to', 'tomorrow'], env)).stderr).toMatch(/^beacon: --to takes ISO-8601/)

  const unknown = await cli(['log', 'count', '--from', '-10m', '--endpoint', 'nosuch'], env)
  expect(unknown.code).toBe(0)
  expect(unknown.stdout).toMatch(/^0 rows /)
  expect(unknown.stderr).toMatch(/no endpoint nosuch is configured \(sample1, sample2, sample3, sample4, sample5\)/)

  const disable = await cli(['endpoint', 'disable', 'nosuch'], env)
  expect(disable.code).toBe(2)
  expect(disable.stderr).toMatch(/404: no such endpoint: the endpoints are sample1, sample2, sample3, sample4, sample5/)

  const publicPort = await cli(['endpoint', 'list'], { ...env, BEACON_ADMIN_URL: app.url })
  expect(publicPort.code).toBe(2)
  expect(publicPort.stderr).toMatch(/is not beacon's admin port: it has no \/healthz .*ADMIN_PORT, 4001 by default/)
  expect((await cli(['log', 'count', '--from', '-1m'], { ...env, BEACON_ADMIN_URL: app.url })).stderr).toMatch(/not beacon's admin port/)

  const dotted = await cli(['log', 'erase', '--id', 'a.b', '--dry-run'], env)
  expect(dotted.code).toBe(1)
  expect(dotted.stderr).toMatch(/this one holds another character \(a dot, a space, …\)/)
})
