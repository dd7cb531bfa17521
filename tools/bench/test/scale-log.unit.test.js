'use strict'

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { dirBytes } = require('../lib/scale-log')

test('dirBytes sums the files under a dir, none when it is absent', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scale-dir-'))
  fs.mkdirSync(path.join(dir, 'a', 'b'), { recursive: true })
  fs.writeFileSync(path.join(dir, 'x'), Buffer.alloc(10))
  fs.writeFileSync(path.join(dir, 'a', 'b', 'y'), Buffer.alloc(32))
  expect(dirBytes(dir)).toBe(42)
  expect(dirBytes(path.join(dir, 'missing'))).toBe(0)
  fs.rmSync(dir, { recursive: true, force: true })
})
