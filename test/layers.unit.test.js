'use strict'

// The layering docs/architecture.md promises ("Layers"), held to the code: imports flow
// server.js → api/ → (logging/, lib/<domain>/) → @beacon/hbase-client, and no module imports a
// floor above its own. config/ (settings) and lib/errors.js, lib/names.js, lib/deadline.js are leaves everyone may
// read. The HBase client is a workspace package (packages/hbase-client): the product reaches it by
// its name and entry only, and it reaches nothing outside itself. index.js (package.json "main") is
// the product's entry for what lives outside it: the tools (tools/*, the client's bench) reach
// beacon through it, the client by its name and each other by their entries, never a module inside.

const fs = require('node:fs')
const path = require('node:path')

const ROOT = path.join(__dirname, '..')
const CLIENT = 'packages/hbase-client'
const CLIENT_NAME = require(path.join(ROOT, CLIENT, 'package.json')).name
// The product's entry for tools and embedders: a floor above api/ that only re-exports.
const ENTRY = 'index.js'
const PRODUCT = ['server.js', ENTRY, 'api', 'lib/toggles', 'lib/shared', 'logging', 'config', 'bin']
// The one module of the product that may load a tool: the dev HBase `npm start` runs.
const HOOK = 'config/embedded-hbase.js'
const TOOLS = ['tools/dev-hbase', 'tools/topology', 'tools/lb', 'tools/bench', 'tools/chaos']
// The HBase client's bench: a tool beside its package, not part of it (it may start HBase).
const CLIENT_BENCH = CLIENT + '/bench'

/** Which top-level areas each area may import (besides itself, node: and npm packages). */
const ALLOWED = {
  'server.js': ['api', 'config', 'logging', 'lib', HOOK],
  [ENTRY]: ['api', 'logging', 'lib', 'config'],
  api: ['logging', 'lib/toggles', 'lib/shared', 'config'],
  logging: ['lib/shared', 'config'],
  'lib/toggles': ['lib/shared'],
  'lib/shared': [],
  config: ['lib/shared'],
  [HOOK]: ['tools/dev-hbase'],
  // The CLI checks an import's lines with the server's own rules (lib/toggles/validate.js).
  bin: ['config', 'logging', 'lib/toggles', 'lib/shared', HOOK],
  [CLIENT]: [],
  // Tools around the server: the server never reads them, and they read the product through its
  // entry only (the dev HBase reads the tables' layouts there).
  'tools/dev-hbase': [ENTRY, 'tools/topology'],
  'tools/topology': [],
  'tools/lb': [],
  'tools/bench': [ENTRY, 'tools'],
  'tools/chaos': [ENTRY, 'tools'],
  [CLIENT_BENCH]: [ENTRY, 'tools']
}

function areaOf (file) {
  const rel = path.relative(ROOT, file).split(path.sep).join('/')
  if (rel === 'server.js' || rel === ENTRY || rel === HOOK) return rel
  if (['lib/errors.js', 'lib/names.js', 'lib/deadline.js'].includes(rel)) return 'lib/shared'
  for (const area of ['lib/toggles', CLIENT_BENCH, CLIENT, ...TOOLS]) if (rel.startsWith(area + '/')) return area
  return rel.split('/')[0]
}

function * sourceFiles (dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) {
      if (!['node_modules', 'results', 'dashboard', 'java', 'proto', 'test'].includes(entry.name)) yield * sourceFiles(full)
    } else if (entry.name.endsWith('.js')) {
      yield full
    }
  }
}

const files = [
  path.join(ROOT, 'server.js'),
  path.join(ROOT, ENTRY),
  ...['api', 'lib', 'logging', 'config', 'bin', path.join(CLIENT, 'lib'), CLIENT_BENCH, ...TOOLS]
    .flatMap((d) => [...sourceFiles(path.join(ROOT, d))])
]
const requiresOf = (file) => [...fs.readFileSync(file, 'utf8').matchAll(/require\(\s*'([^']*)'\s*\)/g)].map((m) => m[1])

test.each(files.map((f) => [path.relative(ROOT, f), f]))('%s imports only its own floor and the ones below', (rel, file) => {
  const from = areaOf(file)
  const text = fs.readFileSync(file, 'utf8')
  const wrong = []
  for (const [, spec] of text.matchAll(/require\(\s*'(\.[^']*)'\s*\)/g)) {
    const target = areaOf(require.resolve(path.resolve(path.dirname(file), spec)))
    const ok =
      target === from ||
      ALLOWED[from].some((a) => target === a || (a === 'lib' && target.startsWith('lib')) || (a === 'tools' && target.startsWith('tools/')))
    if (!ok) wrong.push(`${spec} (${target})`)
  }
  expect(wrong).toEqual([])
})

test('the product reaches the HBase client by its package entry only, never a path inside it', () => {
  const product = files.filter((f) => PRODUCT.includes(areaOf(f)))
  expect(product.length).toBeGreaterThan(100)
  const deep = product.flatMap((f) => requiresOf(f).filter((spec) => spec.startsWith(CLIENT_NAME + '/')).map((spec) => `${f}: ${spec}`))
  expect(deep).toEqual([])
  expect(product.some((f) => requiresOf(f).includes(CLIENT_NAME))).toBe(true)
})

test('the HBase client package imports nothing outside itself but node: and its own dependencies', () => {
  const pkg = require(path.join(ROOT, CLIENT, 'package.json'))
  const own = Object.keys(pkg.dependencies || {})
  // Its bench (packages/hbase-client/bench) is a tool beside the package, not part of it: it may start HBase.
  const inside = [...sourceFiles(path.join(ROOT, CLIENT))].filter((f) => !f.startsWith(path.join(ROOT, CLIENT, 'bench') + path.sep))
  expect(inside.length).toBeGreaterThan(10)
  const wrong = inside.flatMap((f) => requiresOf(f).filter((spec) => {
    if (spec.startsWith('node:') || own.includes(spec)) return false
    if (spec.startsWith('.')) return areaOf(require.resolve(path.resolve(path.dirname(f), spec))) !== CLIENT
    return true
  }).map((spec) => `${path.relative(ROOT, f)}: ${spec}`))
  expect(wrong).toEqual([])
})

/** Every relative require of `file`, resolved, as paths from the root. */
const resolvedRequires = (file) => [...fs.readFileSync(file, 'utf8').matchAll(/require(?:\.resolve)?\(\s*'(\.[^']*)'\s*\)/g)]
  .map((m) => path.relative(ROOT, require.resolve(path.resolve(path.dirname(file), m[1]))).split(path.sep).join('/'))
const toolOf = (rel) => TOOLS.find((t) => rel.startsWith(t + '/'))

test('the product loads a tool only in the dev-HBase hook, and only by its entry', () => {
  const product = files.filter((f) => PRODUCT.includes(areaOf(f)) || areaOf(f) === HOOK)
  const reaching = product.flatMap((f) => resolvedRequires(f).filter(toolOf).map((to) => `${path.relative(ROOT, f)} → ${to}`))
  expect(reaching).toEqual([`${HOOK} → tools/dev-hbase/index.js`])
})

test('tests, the bench and the other tools reach a tool by its entry, never a file inside it', () => {
  const testFiles = [...sourceFiles(path.join(ROOT, 'test'))]
  // The HBase client's own bench (in `files`) is a tool beside its package: it too reaches tools by their entries.
  const outside = [...testFiles, ...files].filter((f) => !toolOf(path.relative(ROOT, f).split(path.sep).join('/')))
  const toolsFiles = files.filter((f) => toolOf(path.relative(ROOT, f)))
  expect(testFiles.length).toBeGreaterThan(100)
  const deep = [...outside, ...toolsFiles].flatMap((f) => {
    const own = toolOf(path.relative(ROOT, f).split(path.sep).join('/'))
    return resolvedRequires(f)
      .filter((to) => toolOf(to) && toolOf(to) !== own && to !== `${toolOf(to)}/index.js`)
      .map((to) => `${path.relative(ROOT, f)} → ${to}`)
  })
  expect(deep).toEqual([])
})

test('the tools, their tests and the client bench reach the product through index.js only', () => {
  // Product modules (areas of PRODUCT, the hook, the client's lib) a tool must not name; test/support is no product.
  const inProduct = (rel) => PRODUCT.includes(areaOf(path.join(ROOT, rel))) || rel === HOOK || rel.startsWith(CLIENT + '/lib/')
  const toolTests = TOOLS.filter((d) => fs.existsSync(path.join(ROOT, d, 'test')))
    .flatMap((d) => [...sourceFiles(path.join(ROOT, d, 'test'))])
  const tools = [...files.filter((f) => toolOf(path.relative(ROOT, f)) || areaOf(f) === CLIENT_BENCH), ...toolTests]
  expect(toolTests.length).toBeGreaterThan(10)
  const deep = tools.flatMap((f) => [
    ...resolvedRequires(f).filter((to) => inProduct(to) && to !== ENTRY),
    ...requiresOf(f).filter((spec) => spec.startsWith(CLIENT_NAME + '/'))
  ].map((to) => `${path.relative(ROOT, f)} → ${to}`))
  expect(deep).toEqual([])
  expect(tools.filter((f) => resolvedRequires(f).includes(ENTRY)).length).toBeGreaterThan(10)
})

test('no source file is over 400 lines', () => {
  const long = files
    .map((f) => [path.relative(ROOT, f), fs.readFileSync(f, 'utf8').split('\n').length])
    .filter(([, n]) => n > 400)
  expect(long).toEqual([])
})

test('the unit tier needs no JVM: no *.unit.test.js reaches HBase or the server', () => {
  const JVM = ['support/hbase', 'support/beacon', 'support/server-process', 'tools/dev-hbase', 'tools/bench/run', 'server.js']
  const unitFiles = [CLIENT, ...TOOLS].filter((d) => fs.existsSync(path.join(ROOT, d, 'test')))
    .reduce((all, d) => [...all, ...sourceFiles(path.join(ROOT, d, 'test'))], [...sourceFiles(path.join(ROOT, 'test'))])
    .filter((f) => f.endsWith('.unit.test.js'))
  expect(unitFiles.length).toBeGreaterThan(10)
  const offenders = unitFiles.filter((f) => {
    const specs = [...fs.readFileSync(f, 'utf8').matchAll(/require\(\s*'([^']*)'\s*\)/g)].map((m) => m[1])
    return specs.some((spec) => JVM.some((j) => spec.endsWith(j) || spec.endsWith(j + '.js')))
  }).map((f) => path.relative(ROOT, f))
  expect(offenders).toEqual([])
})
