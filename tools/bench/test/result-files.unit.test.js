'use strict'

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { writeResult, commitOf, commandOf, provenanceHeader } = require('../lib/result-files')

describe('result files name their command and commit', () => {
  test('writeResult puts the provenance atop the markdown and into the JSON', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-result-'))
    const out = path.join(dir, 'x-flood.json')
    const provenance = { command: 'node tools/bench/flood.js --rate 5', commit: 'abc123 (dirty)' }
    const log = jest.spyOn(console, 'log').mockImplementation(() => {})
    try {
      writeResult({ out, name: 'flood', report: { rps: 1 }, markdown: '# Flood\n', provenance })
    } finally {
      log.mockRestore()
    }
    const md = fs.readFileSync(path.join(dir, 'x-flood.md'), 'utf8')
    expect(md).toBe('> Command: `node tools/bench/flood.js --rate 5`  \n> Commit: `abc123 (dirty)`\n\n# Flood\n')
    expect(JSON.parse(fs.readFileSync(out, 'utf8'))).toEqual({ provenance, rps: 1 })
    fs.rmSync(dir, { recursive: true, force: true })
  })

  test('commitOf: the HEAD hash, marked dirty with changes; unknown outside git', () => {
    expect(commitOf()).toMatch(/^[0-9a-f]{40}( \(dirty\))?$/)
    expect(commitOf(fs.mkdtempSync(path.join(os.tmpdir(), 'no-git-')))).toBe('unknown')
  })

  test('commandOf: node, the script relative to cwd, the arguments quoted when needed', () => {
    const script = path.join(process.cwd(), 'tools/bench/scale.js')
    expect(commandOf(['/usr/bin/node', script, '--out', 'a b.json'])).toBe("node tools/bench/scale.js --out 'a b.json'")
    expect(provenanceHeader({ command: 'c', commit: 'h' })).toBe('> Command: `c`  \n> Commit: `h`\n\n')
  })
})
