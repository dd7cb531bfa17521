'use strict'

// The layering docs/architecture.md promises ("Layers"), held to the code: imports flow
// server.js → api/ → (logging/, lib/<domain>/) → lib/hbase/, and no module imports a floor above
// its own. config/ (settings) and lib/errors.js, lib/names.js are leaves everyone may read.

const fs = require('node:fs')
const path = require('node:path')

const ROOT = path.join(__dirname, '..')

/** Which top-level areas each area may import (besides itself, node: and npm packages). */
const ALLOWED = {
  'server.js': ['api', 'config', 'logging', 'lib', 'infra/hbase'],
  api: ['logging', 'lib/toggles', 'lib/hbase', 'lib/shared', 'config'],
  logging: ['lib/hbase', 'lib/shared', 'config'],
  'lib/toggles': ['lib/hbase', 'lib/shared'],
  'lib/hbase': [],
  'lib/shared': [],
  config: ['lib/shared'],
  bin: ['config', 'logging', 'lib/hbase', 'lib/shared', 'infra/hbase'],
  // Tools around the server: they may read the server's modules, the server never reads them.
  'infra/hbase': ['lib', 'logging', 'config', 'infra/topology'],
  'infra/topology': [],
  'infra/lb': [],
  bench: ['lib', 'logging', 'config', 'api', 'infra']
}

function areaOf (file) {
  const rel = path.relative(ROOT, file).split(path.sep).join('/')
  if (rel === 'server.js') return 'server.js'
  if (rel === 'lib/errors.js' || rel === 'lib/names.js') return 'lib/shared'
  for (const area of ['lib/toggles', 'lib/hbase', 'infra/hbase', 'infra/topology', 'infra/lb']) if (rel.startsWith(area + '/')) return area
  return rel.split('/')[0]
}

function * sourceFiles (dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) {
      if (!['node_modules', 'results', 'dashboard', 'java', 'proto'].includes(entry.name)) yield * sourceFiles(full)
    } else if (entry.name.endsWith('.js')) {
      yield full
    }
  }
}

const files = [
  path.join(ROOT, 'server.js'),
  ...['api', 'lib', 'logging', 'config', 'bin', 'infra', 'bench'].flatMap((d) => [...sourceFiles(path.join(ROOT, d))])
]

test.each(files.map((f) => [path.relative(ROOT, f), f]))('%s imports only its own floor and the ones below', (rel, file) => {
  const from = areaOf(file)
  const text = fs.readFileSync(file, 'utf8')
  const wrong = []
  for (const [, spec] of text.matchAll(/require\(\s*'(\.[^']*)'\s*\)/g)) {
    const target = areaOf(require.resolve(path.resolve(path.dirname(file), spec)))
    const ok =
      target === from ||
      ALLOWED[from].some((a) => target === a || (a === 'lib' && target.startsWith('lib')) || (a === 'infra' && target.startsWith('infra')))
    if (!ok) wrong.push(`${spec} (${target})`)
  }
  expect(wrong).toEqual([])
})

test('no source file is over 400 lines', () => {
  const long = files
    .map((f) => [path.relative(ROOT, f), fs.readFileSync(f, 'utf8').split('\n').length])
    .filter(([, n]) => n > 400)
  expect(long).toEqual([])
})

test('the unit tier needs no JVM: no *.unit.test.js reaches HBase or the server', () => {
  const JVM = ['support/hbase', 'support/beacon', 'support/server-process', 'infra/hbase', 'bench/run', 'server.js']
  const unitFiles = [...sourceFiles(path.join(ROOT, 'test'))].filter((f) => f.endsWith('.unit.test.js'))
  expect(unitFiles.length).toBeGreaterThan(10)
  const offenders = unitFiles.filter((f) => {
    const specs = [...fs.readFileSync(f, 'utf8').matchAll(/require\(\s*'([^']*)'\s*\)/g)].map((m) => m[1])
    return specs.some((spec) => JVM.some((j) => spec.endsWith(j) || spec.endsWith(j + '.js')))
  }).map((f) => path.relative(ROOT, f))
  expect(offenders).toEqual([])
})
