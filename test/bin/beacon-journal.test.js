'use strict'

// `beacon journal status` and `beacon journal replay` as an operator runs them on the disk of a
// lost host: `node bin/beacon.js` in a child process, no beacon running, journal files planted
// as a dead writer leaves them (test/support/crafted-files.js), replayed into a table of the
// test's own on the shared test HBase, rows counted with the test client.

const fs = require('node:fs')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')
const { execFile } = require('node:child_process')
const { bootstrap, testClient, uniqueTable } = require('../support/hbase')
const { writeOrphan, records, record, recordKey } = require('../support/crafted-files')
const { deadPid } = require('../support/pids')
const { accessLogSplitKeys, ACCESS_LOG_FAMILY, ACCESS_LOG_QUALIFIER } = require('../../logging/access-log-layout')
const { journalFiles, quarantinedFiles } = require('../../logging/hbase-sink/journal')

const CLI = path.join(__dirname, '..', '..', 'bin', 'beacon.js')
const DEAD_PID = deadPid() // the pid crafted-files names its orphans after

let client
let closedPort
const tables = []
const dirs = []

/**
 * Runs the CLI with only the environment given (plus PATH and the test HBase).
 * @returns {Promise<{ code: number, stdout: string, stderr: string }>}
 */
function cli (args, env = {}) {
  const base = { PATH: process.env.PATH, BEACON_HBASE_BOOTSTRAP: bootstrap().join(',') }
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: { ...base, ...env }, timeout: 45000 }, (err, stdout, stderr) => {
      resolve({ code: err ? err.code : 0, stdout, stderr })
    })
  })
}

/** @returns {Promise<{ code: number, json: any, stderr: string }>} */
async function cliJson (args, env) {
  const res = await cli([...args, '--json'], env)
  let json = null
  try { json = JSON.parse(res.stdout) } catch {}
  return { code: res.code, json, stderr: res.stderr }
}

async function logTable () {
  const table = uniqueTable('journal')
  await client.admin.createTable(table, { families: [ACCESS_LOG_FAMILY], splits: accessLogSplitKeys(16, 4) })
  tables.push(table)
  return table
}

/** A state dir with an empty journal/ directory. */
function stateDir () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-journal-cli-'))
  dirs.push(dir)
  fs.mkdirSync(path.join(dir, 'journal'))
  return dir
}

/** A line with a record's shape made of a record cut short and the next one: only a JSON parse tells. */
const glued = (tag) => record(tag, 900).slice(0, 60) + record(tag, 901) + '\n'

/**
 * What a lost host leaves: a journal cut mid-record, a journal with a garbage line and a glued
 * line inside, a write-ahead log, and a file quarantined earlier.
 * @param {string} dir the state dir
 * @returns {{ whole: number, damaged: number, keys: string[] }}
 */
function plantLostHost (dir) {
  const journal = path.join(dir, 'journal')
  writeOrphan(journal, records('cut', 20) + record('cut', 20).slice(0, 40))
  writeOrphan(journal, records('mid', 10) + 'garbage, not a record\n' + glued('mid') + records('mid2', 5))
  writeOrphan(journal, records('wal', 7), 'gone-wal')
  fs.writeFileSync(path.join(journal, `j-${DEAD_PID}-old-1700000000000000000.ndjson.damaged-1700000000001`), 'junk\n')
  const keys = [
    ...Array.from({ length: 20 }, (_, i) => recordKey('cut', i)),
    ...Array.from({ length: 10 }, (_, i) => recordKey('mid', i)),
    ...Array.from({ length: 5 }, (_, i) => recordKey('mid2', i)),
    ...Array.from({ length: 7 }, (_, i) => recordKey('wal', i))
  ]
  return { whole: 42, damaged: 3, keys }
}

/** name → content of the journal-named files of a directory */
function snapshot (dir) {
  return Object.fromEntries(journalFiles(dir).map((f) => [path.basename(f), fs.readFileSync(f, 'utf8')]))
}

beforeAll(async () => {
  client = testClient()
  const server = net.createServer()
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  closedPort = /** @type {net.AddressInfo} */ (server.address()).port
  await new Promise((resolve) => server.close(resolve))
})

afterAll(async () => {
  for (const table of tables) await client.admin.deleteTable(table).catch(() => {})
  await client.close()
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
})

describe('journal status', () => {
  test('a state dir with no journal, or an empty one: nothing waits, exit 0', async () => {
    const bare = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-journal-cli-'))
    dirs.push(bare)
    const none = await cliJson(['journal', 'status', '--state-dir', bare])
    expect(none.code).toBe(0)
    expect(none.json).toEqual({ stateDir: bare, dirs: [], totals: { files: 0, entries: 0, damagedLines: 0, bytes: 0, quarantined: 0 } })

    const empty = stateDir()
    const text = await cli(['journal', 'status', '--state-dir', empty])
    expect(text).toMatchObject({ code: 0, stderr: '' })
    expect(text.stdout.split('\n')).toEqual([
      `${empty}: nothing waits to be replayed (0 files, 0 damaged lines, 0 bytes; 0 quarantined)`,
      'journal  no files',
      ''
    ])
  })

  test('planted files: exact entries and damaged lines per file, the wal, the quarantined file; exit 4', async () => {
    const dir = stateDir()
    plantLostHost(dir)
    fs.mkdirSync(path.join(dir, 'journal', 'archive'))
    writeOrphan(path.join(dir, 'journal', 'archive'), records('arc', 3))
    const sizes = Object.fromEntries([...journalFiles(path.join(dir, 'journal')), ...journalFiles(path.join(dir, 'journal', 'archive'))]
      .map((f) => [path.basename(f), fs.statSync(f).size]))

    const { code, json } = await cliJson(['journal', 'status', '--state-dir', dir])
    expect(code).toBe(4)
    const [main, archive] = json.dirs
    expect(main.dir).toBe('journal')
    expect(main.files.map((f) => [f.kind, f.pid, f.running, f.entries, f.damagedLines, f.bytes])).toEqual([
      ['journal', DEAD_PID, false, 20, 1, sizes[main.files[0].name]],
      ['journal', DEAD_PID, false, 15, 2, sizes[main.files[1].name]],
      ['wal', DEAD_PID, false, 7, 0, sizes[main.files[2].name]]
    ])
    expect(main.quarantined).toEqual([{ name: `j-${DEAD_PID}-old-1700000000000000000.ndjson.damaged-1700000000001`, bytes: 5 }])
    expect(archive).toMatchObject({ dir: path.join('journal', 'archive'), entries: 3, damagedLines: 0 })
    const bytes = Object.values(sizes).reduce((a, b) => a + b, 0)
    expect(json.totals).toEqual({ files: 4, entries: 45, damagedLines: 3, bytes, quarantined: 1 })

    const text = await cli(['journal', 'status', '--state-dir', dir])
    expect(text.code).toBe(4)
    expect(text.stdout).toContain(`${dir}: 45 entries wait to be replayed (4 files, 3 damaged lines, ${bytes} bytes; 1 quarantined)`)
    expect(text.stdout).toMatch(new RegExp(`${main.files[2].name}  wal +pid ${DEAD_PID} not running +7 entries, 0 damaged lines`))
    expect(text.stdout).toContain(`  quarantined  ${main.quarantined[0].name}  5 bytes`)
    // Read only: every file is where it was.
    expect(journalFiles(path.join(dir, 'journal'))).toHaveLength(3)
  })
})

describe('journal replay', () => {
  test('every whole record becomes one row with its own key and value; damaged files kept, renamed; exit 0', async () => {
    const table = await logTable()
    const dir = stateDir()
    const { whole, damaged, keys } = plantLostHost(dir)
    const journal = path.join(dir, 'journal')

    const { code, json } = await cliJson(['journal', 'replay', '--state-dir', dir], { BEACON_ACCESS_LOG_TABLE: table })
    expect(code).toBe(0)
    expect(json.sinks).toEqual([expect.objectContaining({
      sink: 'hbase', table, dir: journal, claimed: whole + damaged, written: whole, corrupt: damaged, quarantinedFiles: 2, left: 0
    })])
    expect(json).toMatchObject({
      all: false,
      skipped: [],
      left: [],
      totals: { written: whole, corrupt: damaged, quarantinedFiles: 2, skippedEntries: 0, leftEntries: 0 }
    })
    expect(await client.count(table)).toBe(whole)
    const row = await client.get(table, keys[0])
    expect(row.cells.find((c) => c.qualifier === ACCESS_LOG_QUALIFIER).value.toString())
      .toBe(JSON.stringify({ ts: 1700000000000, endpoint: 'sample5', id: '0', status: 200 }))
    // The two damaged journals renamed, the one quarantined before untouched; nothing else left.
    expect(journalFiles(journal)).toEqual([])
    expect(quarantinedFiles(journal)).toHaveLength(3)
    expect((await cli(['journal', 'status', '--state-dir', dir])).code).toBe(0)

    const text = await cli(['journal', 'replay', '--state-dir', dir], { BEACON_ACCESS_LOG_TABLE: table })
    expect(text.code).toBe(0)
    expect(text.stdout).toContain(`sink hbase (table ${table}, ${journal}): ` +
      '0 written, 0 damaged lines skipped, 0 files quarantined, 0 entries left')
    expect(text.stdout).toMatch(/^done: every whole record sent \(0 sent/m)
  })

  test('run twice on the same records: the same rows (a replayed entry keeps its key)', async () => {
    const table = await logTable()
    const dir = stateDir()
    const { whole } = plantLostHost(dir)
    expect((await cli(['journal', 'replay', '--state-dir', dir], { BEACON_ACCESS_LOG_TABLE: table })).code).toBe(0)
    expect(await client.count(table)).toBe(whole)
    plantLostHost(dir) // the same records again, as if the first run had died before deleting its files
    const again = await cliJson(['journal', 'replay', '--state-dir', dir], { BEACON_ACCESS_LOG_TABLE: table })
    expect(again.code).toBe(0)
    expect(again.json.totals.written).toBe(whole)
    expect(await client.count(table)).toBe(whole)
  })

  test('files of a writer running on this machine are skipped (exit 4); --all takes them', async () => {
    const table = await logTable()
    const dir = stateDir()
    const journal = path.join(dir, 'journal')
    const live = path.join(journal, `j-${process.pid}-live-1700000000000000000.ndjson`) // this test's pid: it runs
    fs.writeFileSync(live, records('live', 6))
    writeOrphan(journal, records('dead', 4))

    const status = await cliJson(['journal', 'status', '--state-dir', dir])
    expect(Object.fromEntries(status.json.dirs[0].files.map((f) => [f.pid, f.running]))).toEqual({ [DEAD_PID]: false, [process.pid]: true })

    const first = await cliJson(['journal', 'replay', '--state-dir', dir], { BEACON_ACCESS_LOG_TABLE: table })
    expect(first.code).toBe(4)
    expect(first.json.totals).toMatchObject({ written: 4, skippedEntries: 6, leftEntries: 0 })
    expect(first.json.skipped).toEqual([expect.objectContaining({ name: path.basename(live), pid: process.pid, entries: 6 })])
    expect(first.json.skipped[0].cause).toBe('running')
    expect(fs.readFileSync(live, 'utf8')).toBe(records('live', 6)) // not claimed, not renamed
    const text = await cli(['journal', 'replay', '--state-dir', dir], { BEACON_ACCESS_LOG_TABLE: table })
    expect(text.code).toBe(4)
    expect(text.stdout).toContain('skipped: their writer runs on this machine')
    expect(text.stdout).toMatch(/^not done: 6 entries still on disk .*--all takes them/m)

    const all = await cliJson(['journal', 'replay', '--state-dir', dir, '--all'], { BEACON_ACCESS_LOG_TABLE: table })
    expect(all.code).toBe(0)
    expect(all.json).toMatchObject({ all: true, skipped: [], left: [], totals: { written: 6 } })
    expect(journalFiles(journal)).toEqual([])
    expect(await client.count(table)).toBe(10)
  })

  test('HBase unreachable at start: exit 2 naming BEACON_HBASE_BOOTSTRAP, no file touched', async () => {
    const dir = stateDir()
    plantLostHost(dir)
    const before = snapshot(path.join(dir, 'journal'))
    const res = await cli(['journal', 'replay', '--state-dir', dir], { BEACON_HBASE_BOOTSTRAP: `127.0.0.1:${closedPort}` })
    expect(res.code).toBe(2)
    expect(res.stdout).toBe('')
    expect(res.stderr).toMatch(new RegExp(`^beacon: HBase at 127.0.0.1:${closedPort} cannot be reached: .*BEACON_HBASE_BOOTSTRAP`))
    expect(snapshot(path.join(dir, 'journal'))).toEqual(before)
  })

  test('no HBase named and no local one running: exit 2 naming BEACON_HBASE_BOOTSTRAP', async () => {
    const dir = stateDir()
    const nowhere = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-no-hbase-'))
    dirs.push(nowhere)
    // The embedded instance looked for has no pid files there: it does not run.
    const res = await cli(['journal', 'replay', '--state-dir', dir], { BEACON_HBASE_BOOTSTRAP: '', BEACON_HBASE_STATE_DIR: nowhere })
    expect(res.code).toBe(2)
    expect(res.stderr).toMatch(/^beacon: no HBase to replay into: set BEACON_HBASE_BOOTSTRAP=host:port/)
  })

  test('HBase refuses the writes (no such table): exit 4, every entry still on disk', async () => {
    const dir = stateDir()
    const { whole } = plantLostHost(dir)
    const missing = uniqueTable('missing')
    const res = await cliJson(['journal', 'replay', '--state-dir', dir], { BEACON_ACCESS_LOG_TABLE: missing })
    expect(res.code).toBe(4)
    expect(res.json.totals).toMatchObject({ written: 0, leftEntries: whole })
    expect(res.json.sinks[0]).toMatchObject({ written: 0, lastError: 'HBASE_TABLE_NOT_FOUND' })
    expect(res.json.left.every((f) => f.cause === 'not written')).toBe(true)
    const after = await cliJson(['journal', 'status', '--state-dir', dir])
    expect(after.code).toBe(4)
    expect(after.json.totals.entries).toBe(whole)
  })

  test('a settings error: exit 2, nothing touched', async () => {
    const dir = stateDir()
    plantLostHost(dir)
    const before = snapshot(path.join(dir, 'journal'))
    const file = path.join(dir, 'settings.json')
    fs.writeFileSync(file, JSON.stringify({ noSuchSetting: 1 }))
    const res = await cli(['journal', 'replay', '--state-dir', dir], { BEACON_CONFIG_FILE: file })
    expect(res.code).toBe(2)
    expect(res.stderr).toMatch(/noSuchSetting/)
    expect(snapshot(path.join(dir, 'journal'))).toEqual(before)
  })
})

describe('usage', () => {
  const aFile = () => {
    const dir = stateDir()
    fs.writeFileSync(path.join(dir, 'f'), '')
    return path.join(dir, 'f')
  }
  test.each([
    ['no --state-dir', [], /--state-dir <dir> is required/],
    ['a --state-dir that does not exist', ['--state-dir', '/nonexistent/x'], /--state-dir \/nonexistent\/x: no such directory/],
    ['a --state-dir that is a file', ['--state-dir', '@file'], /: not a directory/],
    ['an argument', ['extra', '--state-dir', '/tmp'], /usage: beacon journal/],
    ['--url (no admin API here)', ['--state-dir', '/tmp', '--url', 'http://x'], /Unknown option '--url'/]
  ])('%s: exit 1 (status and replay)', async (name, args, message) => {
    for (const words of [['journal', 'status'], ['journal', 'replay']]) {
      const res = await cli([...words, ...args.map((a) => (a === '@file' ? aFile() : a))])
      expect({ words, code: res.code, stdout: res.stdout }).toEqual({ words, code: 1, stdout: '' })
      expect(res.stderr).toMatch(message)
    }
  })

  test('--help: the options and exit codes, no --url', async () => {
    for (const words of ['status', 'replay']) {
      const res = await cli(['journal', words, '--help'])
      expect(res.code).toBe(0)
      expect(res.stdout).toMatch(new RegExp(`^usage: beacon journal ${words} --state-dir <dir>`))
      expect(res.stdout).toMatch(/exit codes: 0 .*4 /s)
      expect(res.stdout).not.toContain('--url')
    }
    expect((await cli(['journal', 'replay', '--help'])).stdout).toContain('--all')
  })
})
