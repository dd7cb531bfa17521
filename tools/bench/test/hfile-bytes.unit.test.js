'use strict'

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { hfileBytes } = require('../lib/hfile-bytes')

let root
beforeEach(() => { root = fs.mkdtempSync(path.join(os.tmpdir(), 'hfile-bytes-')) })
afterEach(() => fs.rmSync(root, { recursive: true, force: true }))

function file (rel, bytes) {
  const full = path.join(root, rel)
  fs.mkdirSync(path.dirname(full), { recursive: true })
  fs.writeFileSync(full, Buffer.alloc(bytes))
}

test('sums the HFiles of one family over the regions, nothing else', () => {
  file('data/default/t/r1/l/aaa', 100)
  file('data/default/t/r1/l/.aaa.crc', 8)
  file('data/default/t/r1/.regioninfo', 50)
  file('data/default/t/r1/recovered.edits/5.seqid', 0)
  file('data/default/t/r2/l/bbb', 200)
  file('data/default/t/r2/x/ccc', 400)
  file('data/default/t/.tabledesc/.tableinfo.0000000001', 300)
  file('archive/data/default/t/r1/l/old', 1000)
  file('data/default/other/r1/l/ddd', 800)
  expect(hfileBytes(root, 't', 'l')).toEqual({ bytes: 300, files: 2, regions: 2 })
})

test('a namespaced table, and a table that is not there', () => {
  file('data/ns/t/r1/l/aaa', 10)
  expect(hfileBytes(root, 'ns:t', 'l')).toEqual({ bytes: 10, files: 1, regions: 1 })
  expect(hfileBytes(root, 'missing', 'l')).toEqual({ bytes: 0, files: 0, regions: 0 })
})
