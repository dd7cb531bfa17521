'use strict'

// The state dir keeps its secrets: after `npm start` (the real entry point) and a few logged
// views, under the usual umask 022, no file in it can be read and no folder entered by another
// user (journals, write-ahead logs and file logs hold full IPs and user agents; the token file the
// admin token), while it runs and after it stops; a state dir left readable is narrowed.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { startServerProcess } = require('../support/server-process')
const { freePorts } = require('../support/ports')
const { request } = require('../support/beacon')
const hbase = require('../../tools/dev-hbase')

/** Every file under `dir` (not folders), relative to it. */
function filesUnder (dir) {
  const files = []
  const list = (at) => {
    for (const entry of fs.readdirSync(at, { withFileTypes: true })) {
      if (entry.isDirectory()) list(path.join(at, entry.name))
      else files.push(path.relative(dir, path.join(at, entry.name)))
    }
  }
  list(dir)
  return files
}

/** Every path under `dir` whose mode lets group or others in. */
function openToOthers (dir) {
  const found = []
  const walk = (at) => {
    for (const entry of fs.readdirSync(at, { withFileTypes: true })) {
      const file = path.join(at, entry.name)
      let mode
      try {
        mode = fs.lstatSync(file).mode & 0o777
      } catch (err) {
        if (err.code === 'ENOENT') continue // HBase rolls and archives its files meanwhile
        throw err
      }
      if (mode & 0o077) found.push(`${path.relative(dir, file)} ${mode.toString(8)}`)
      if (entry.isDirectory()) walk(file)
    }
  }
  walk(dir)
  return found
}

test('under umask 022, npm start makes every file in the state dir 0600 and every folder 0700', async () => {
  const previous = process.umask(0o022)
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-private-'))
  const stateDir = path.join(parent, 'state')
  fs.mkdirSync(stateDir, { mode: 0o755 })
  fs.chmodSync(stateDir, 0o755) // as an older beacon left it
  const [port, adminPort] = await freePorts(2)
  const server = await startServerProcess({ port, adminPort, stateDir, env: { BEACON_WORKERS: '1' } })
  try {
    process.umask(previous)
    for (let i = 0; i < 20; i++) {
      for (const endpoint of ['sample4', 'sample5']) {
        expect((await request(`http://127.0.0.1:${port}/api/${endpoint}.js?id=${i}&callback=cb`)).status).toBe(200)
      }
    }
    const files = filesUnder(stateDir)
    // What there is to protect: the token and the file log of sample4 at least (sample5's
    // write-ahead log files come and go as HBase takes their entries).
    expect(files).toContain('admin-token')
    expect(files.some((f) => f.startsWith('logs' + path.sep))).toBe(true)
    expect(fs.statSync(stateDir).mode & 0o777).toBe(0o700)
    expect(openToOthers(stateDir)).toEqual([])
  } finally {
    process.umask(previous)
    expect(await server.stop(20000)).toBe(0)
  }
  expect(openToOthers(stateDir)).toEqual([])
  fs.rmSync(parent, { recursive: true, force: true })
})

test('the HBase that tools/dev-hbase starts keeps its files to this user, write-ahead logs included', () => {
  // This run's HBase, started by the same tool (and under the same umask) as npm start's embedded
  // one; the views above are in its WALs, which Hadoop's local file system would make 0666.
  const opts = hbase.resolveOptions(JSON.parse(process.env.BEACON_TEST_HBASE_OPTIONS || '{}'))
  expect(filesUnder(path.join(opts.dataDir, 'hbase', 'WALs')).length).toBeGreaterThan(0)
  expect(openToOthers(opts.stateDir)).toEqual([])
})
