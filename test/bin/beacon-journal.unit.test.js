'use strict'

// The parts of `beacon journal status|replay` that need no HBase: counting a journal file the
// way the replay does (real files), what the commands print and their exit codes, how a replay's
// left-overs are sorted, and the journal's claimLiveFiles option behind `--all`.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { inventory, countFile } = require('../../logging/hbase-sink/journal/inventory')
const { createJournal, holdWriter } = require('../../logging/hbase-sink/journal')
const { isOrphan } = require('../../logging/hbase-sink/journal/files')
const { DEFAULTS: SINK } = require('../../logging/hbase-sink/options')
const { statusText, statusCode, sortLeft, replayCode, replayText } = require('../../bin/journal-format')
const { execute } = require('../../bin/beacon')
const { writeOrphan, records, record } = require('../support/crafted-files')
const { deadPid } = require('../support/pids')

const DEAD = deadPid()
const dirs = []
function tempDir () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-journal-unit-'))
  dirs.push(dir)
  return dir
}

afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
})

describe('countFile: whole records and damaged lines, as the replay counts them', () => {
  const buffer = Buffer.allocUnsafe(SINK.replayReadBytes)

  test.each([
    ['whole records', records('a', 25), 25, 0],
    ['a last record cut short', records('a', 3) + record('a', 3).slice(0, 30), 3, 1],
    ['a last record without its newline', records('a', 3) + record('a', 3), 4, 0],
    ['garbage and an empty line', records('a', 2) + 'garbage\n\n' + records('b', 2), 4, 2],
    ['a glued line (a cut record and the next: the right shape, not JSON)', record('a', 0).slice(0, 50) + record('a', 1) + '\n', 0, 1],
    ['a line longer than the replay reads at once', records('a', 1) + 'x'.repeat(SINK.replayReadBytes + 10) + '\n' + records('b', 1), 2, 1]
  ])('%s', async (name, content, entries, damagedLines) => {
    const file = writeOrphan(tempDir(), content)
    expect(await countFile(file, buffer)).toEqual({ entries, damagedLines, bytes: Buffer.byteLength(content) })
  })

  test('a directory in a journal file\'s place, and an empty file', async () => {
    const dir = tempDir()
    const sub = path.join(dir, `j-${DEAD}-gone-1.ndjson`)
    fs.mkdirSync(sub)
    expect(await countFile(sub, buffer)).toEqual({ entries: 0, damagedLines: 0, bytes: 0, error: 'not a regular file' })
    expect(await countFile(writeOrphan(dir, ''), buffer)).toEqual({ entries: 0, damagedLines: 0, bytes: 0 })
  })
})

test('inventory: journal/ and the sink directories under it, quarantined files, totals; other names ignored', async () => {
  const state = tempDir()
  const journal = path.join(state, 'journal')
  fs.mkdirSync(path.join(journal, 'archive'), { recursive: true })
  const a = writeOrphan(journal, records('a', 4) + 'bad\n')
  const w = writeOrphan(journal, records('w', 2), 'gone-wal')
  const b = writeOrphan(path.join(journal, 'archive'), records('b', 1))
  fs.writeFileSync(path.join(journal, 'j-1-x-2.ndjson.damaged-3'), 'abc')
  fs.writeFileSync(path.join(journal, 'README'), 'not a journal file')
  fs.mkdirSync(path.join(journal, `j-${DEAD}-gone-9.ndjson`)) // a damaged "file", not a sink directory

  const inv = await inventory(state)
  expect(inv.dirs.map((d) => d.dir)).toEqual(['journal', path.join('journal', 'archive')])
  expect(inv.dirs[0].files.map((f) => [f.name, f.kind, f.entries, f.damagedLines, f.error])).toEqual([
    [path.basename(a), 'journal', 4, 1, undefined],
    [path.basename(w), 'wal', 2, 0, undefined],
    [`j-${DEAD}-gone-9.ndjson`, 'journal', 0, 0, 'not a regular file']
  ].sort((x, y) => (x[0] < y[0] ? -1 : 1)))
  expect(inv.dirs[0].quarantined).toEqual([{ name: 'j-1-x-2.ndjson.damaged-3', bytes: 3 }])
  const bytes = [a, w, b].reduce((n, f) => n + fs.statSync(f).size, 0)
  expect(inv.totals).toEqual({ files: 4, entries: 7, damagedLines: 1, bytes, quarantined: 1 })
  expect(statusCode(inv)).toBe(4)
  expect(fs.readdirSync(journal).length).toBe(6) // nothing moved

  const nothing = path.join(state, 'nothing-here')
  const zero = { files: 0, entries: 0, damagedLines: 0, bytes: 0, quarantined: 0 }
  expect(await inventory(nothing)).toEqual({ stateDir: nothing, dirs: [], totals: zero })
})

describe('what the commands print', () => {
  const file = (over) => ({
    name: 'j-7-w1-1.ndjson', kind: 'journal', pid: 7, running: false, entries: 3, damagedLines: 1, bytes: 300, ...over
  })
  const wal = file({ name: 'j-8-w1-wal-2.ndjson', kind: 'wal', pid: 8, running: true, entries: 1, damagedLines: 0, bytes: 0 })
  const inv = {
    stateDir: '/s',
    dirs: [{
      dir: 'journal',
      path: '/s/journal',
      files: [file(), wal],
      quarantined: [{ name: 'j-7-w1-0.ndjson.damaged-5', bytes: 12 }],
      entries: 4,
      damagedLines: 1,
      bytes: 300
    }],
    totals: { files: 2, entries: 4, damagedLines: 1, bytes: 300, quarantined: 1 }
  }

  test('status: a header line, then per directory its files and quarantined files', () => {
    expect(statusText(inv).split('\n')).toEqual([
      '/s: 3 entries wait to be replayed (2 files, 1 damaged line, 300 bytes; 1 quarantined); ' +
        '1 entry in live files of running pid 8 (their writer replays them)',
      'journal  4 entries, 1 damaged line',
      '  j-7-w1-1.ndjson      journal  pid 7 not running         3 entries, 1 damaged line, 300 bytes',
      '  j-8-w1-wal-2.ndjson  wal      pid 8 running here        1 entry, 0 damaged lines, 0 bytes  (empty)',
      '  quarantined  j-7-w1-0.ndjson.damaged-5  12 bytes'
    ])
    expect(statusCode(inv)).toBe(4)
    // Only a running writer's live files: nothing waits, exit 0 (a pre-stop hook beside a live beacon).
    const liveOnly = { ...inv, dirs: [{ ...inv.dirs[0], files: [wal], entries: 1 }] }
    expect(statusText(liveOnly).split('\n')[0]).toBe('/s: nothing waits to be replayed (2 files, 1 damaged line, 300 bytes; ' +
      '1 quarantined); 1 entry in live files of running pid 8 (their writer replays them)')
    expect(statusCode(liveOnly)).toBe(0)
    const none = { stateDir: '/e', dirs: [], totals: { files: 0, entries: 0, damagedLines: 0, bytes: 0, quarantined: 0 } }
    expect(statusText(none)).toBe('/e: no journal directory; nothing waits to be replayed')
    expect(statusCode(none)).toBe(0)
  })

  const report = (over = {}) => ({
    stateDir: '/s',
    hbase: 'h:1',
    all: false,
    sinks: [{
      sink: 'hbase', table: 't', dir: '/s/journal', claimed: 12, written: 10, corrupt: 2, quarantinedFiles: 1, left: 0, lastError: null
    }],
    skipped: [],
    left: [],
    totals: { written: 10, corrupt: 2, quarantinedFiles: 1, skippedEntries: 0, leftEntries: 0 },
    ...over
  })

  test('replay: exit 0 only when nothing is left or skipped; the reason for each file left', () => {
    expect(replayCode(report())).toBe(0)
    expect(replayText(report()).split('\n')).toEqual([
      'replayed /s into HBase h:1',
      '  sink hbase (table t, /s/journal): 10 written, 2 damaged lines skipped, 1 file quarantined, 0 entries left',
      'done: every whole record sent (10 sent, 2 damaged lines skipped, 1 file quarantined)'
    ])
    const leftFile = (over) => ({ dir: 'journal', kind: 'journal', damagedLines: 0, reason: 'r', ...over })
    const skipped = [leftFile({ name: 'j-8-w-1.ndjson', pid: 8, entries: 5, cause: 'running' })]
    const withSkipped = report({ skipped, totals: { ...report().totals, skippedEntries: 5 } })
    expect(replayCode(withSkipped)).toBe(4)
    expect(replayText(withSkipped)).toMatch(/\n {2}journal\/j-8-w-1\.ndjson {2}pid 8 {2}5 entries, 0 damaged lines\n/)
    expect(replayText(withSkipped)).toMatch(/\nnot done: 5 entries still on disk .*; --all takes them/)

    const sinks = [{ ...report().sinks[0], written: 0, left: 12, lastError: 'HBASE_TIMEOUT' }]
    const left = [leftFile({ name: 'j-9-cli9-1.ndjson', pid: 9, entries: 12, cause: 'not written' })]
    const failed = report({ sinks, left, totals: { ...report().totals, written: 0, leftEntries: 12 } })
    expect(replayCode(failed)).toBe(4)
    expect(replayText(failed)).toContain('12 entries left (last error HBASE_TIMEOUT)')
    expect(replayText(failed)).toContain('left on disk: HBase refused or did not answer:')
    expect(replayText(failed)).toMatch(/run it again once HBase answers$/)
    // A sink that still counts lines (say, only damaged ones, in a file not read yet) is not done.
    expect(replayCode(report({ sinks }))).toBe(4)
  })

  test('sortLeft: a running writer\'s files are skipped; the replay\'s own, other dead ones and unused dirs are left', () => {
    const f = (name, pid, running) => ({ name, kind: 'journal', pid, running, entries: 1, damagedLines: 0, bytes: 10 })
    const after = {
      stateDir: '/s',
      dirs: [
        { dir: 'journal', path: '/s/journal', files: [f('a', 100, true), f('b', 200, true), f('c', 300, false)], quarantined: [] },
        { dir: 'journal/x', path: '/s/journal/x', files: [f('d', 400, false)], quarantined: [], entries: 1, damagedLines: 0, bytes: 10 }
      ],
      totals: { files: 4, entries: 4, damagedLines: 0, bytes: 40, quarantined: 0 }
    }
    const { skipped, left } = sortLeft(after, { sinkDirs: ['/s/journal'], ownPid: 200 })
    expect(skipped.map((x) => [x.name, x.cause])).toEqual([['a', 'running']])
    expect(left.map((x) => [x.name, x.cause])).toEqual([['b', 'not written'], ['c', 'not claimed'], ['d', 'no sink']])
  })
})

describe('usage errors exit 1 before anything is read', () => {
  test.each([
    [['journal', 'status'], /--state-dir <dir> is required/],
    [['journal', 'replay', '--state-dir', '/nonexistent/x'], /no such directory/],
    [['journal', 'replay', '--state-dir', '/tmp', '--url', 'http://x'], /Unknown option '--url'/],
    [['journal', 'status', 'extra', '--state-dir', '/tmp'], /usage: beacon journal status/]
  ])('%j', async (argv, message) => {
    await expect(execute(argv)).rejects.toMatchObject({ exitCode: 1, message: expect.stringMatching(message) })
  })

  test('status through execute: the inventory and exit 4', async () => {
    const state = tempDir()
    fs.mkdirSync(path.join(state, 'journal'))
    writeOrphan(path.join(state, 'journal'), records('e', 2))
    const res = await execute(['journal', 'status', '--state-dir', state])
    expect(res.code).toBe(4)
    expect(res.value.totals.entries).toBe(2)
  })
})

describe('claimLiveFiles (replay --all): every file but this process\'s open writers is an orphan', () => {
  test('isOrphan with anyPid', () => {
    const dir = tempDir()
    const running = process.ppid // the jest worker's parent: alive
    const release = holdWriter(dir, 'held')
    try {
      expect(isOrphan(dir, `j-${running}-w-1.ndjson`, process.pid)).toBe(false)
      expect(isOrphan(dir, `j-${running}-w-1.ndjson`, process.pid, true)).toBe(true)
      expect(isOrphan(dir, `j-${process.pid}-held-1.ndjson`, process.pid, true)).toBe(false)
      expect(isOrphan(dir, `j-${process.pid}-other-1.ndjson`, process.pid, true)).toBe(true)
      expect(isOrphan(dir, 'README', process.pid, true)).toBe(false)
    } finally {
      release()
    }
  })

  test('a journal with claimLiveFiles claims a running pid\'s file; without, it leaves it', async () => {
    const dir = tempDir()
    fs.writeFileSync(path.join(dir, `j-${process.ppid}-live-1.ndjson`), records('l', 3))
    const plain = createJournal({ dir, writerId: 'plain' })
    expect(await plain.claimOrphans()).toEqual([])
    await plain.close()
    const all = createJournal({ dir, writerId: 'all', claimLiveFiles: true })
    const claimed = await all.claimOrphans()
    expect(claimed.map((f) => [f.from, f.lines])).toEqual([[`j-${process.ppid}-live-1.ndjson`, 3]])
    await all.close()
  })
})
