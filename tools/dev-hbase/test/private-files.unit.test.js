'use strict'

// What tools/dev-hbase writes in an instance's state dir is this user's only under any umask;
// a tree an older version left open is narrowed once. (The JVMs' own files are checked against a
// real HBase in test/api/state-dir.test.js.)

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { mkdirPrivate, touchPrivate, narrowTree, underPrivateUmask } = require('../private-files')

const modeOf = (file) => fs.lstatSync(file).mode & 0o777

let dir
let previousUmask
beforeEach(() => {
  previousUmask = process.umask(0o022)
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-private-files-'))
})
afterEach(() => {
  process.umask(previousUmask)
  fs.rmSync(dir, { recursive: true, force: true })
})

test('folders and files it creates are 0700 and 0600 under umask 022', () => {
  mkdirPrivate(path.join(dir, 'a', 'b'))
  touchPrivate(path.join(dir, 'a', 'b', 'tool.log'))
  expect(modeOf(path.join(dir, 'a'))).toBe(0o700)
  expect(modeOf(path.join(dir, 'a', 'b'))).toBe(0o700)
  expect(modeOf(path.join(dir, 'a', 'b', 'tool.log'))).toBe(0o600)
})

test('a command run under the private umask creates its files 0600', () => {
  const [cmd, args] = underPrivateUmask('touch', [path.join(dir, 'made-by-child')])
  expect(spawnSync(cmd, args).status).toBe(0)
  expect(modeOf(path.join(dir, 'made-by-child'))).toBe(0o600)
})

test('an open tree is narrowed once; a private top is left alone unless asked', () => {
  const tree = path.join(dir, 'state')
  fs.mkdirSync(path.join(tree, 'wal'), { recursive: true, mode: 0o755 })
  fs.writeFileSync(path.join(tree, 'wal', 'one'), 'x', { mode: 0o666 })
  fs.chmodSync(path.join(tree, 'wal', 'one'), 0o666)
  fs.symlinkSync('/etc/hostname', path.join(tree, 'link'))
  expect(narrowTree(tree)).toBe(3)
  expect([tree, path.join(tree, 'wal'), path.join(tree, 'wal', 'one')].map(modeOf)).toEqual([0o700, 0o700, 0o600])
  expect(modeOf('/etc/hostname') & 0o044).not.toBe(0) // a link is not followed

  fs.writeFileSync(path.join(tree, 'wal', 'two'), 'x', { mode: 0o644 })
  expect(narrowTree(tree)).toBe(0)
  expect(modeOf(path.join(tree, 'wal', 'two'))).toBe(0o644)
  expect(narrowTree(tree, { always: true })).toBe(1)
  expect(modeOf(path.join(tree, 'wal', 'two'))).toBe(0o600)
  expect(narrowTree(path.join(dir, 'missing'))).toBe(0)
})
