'use strict'

// The HBase JVMs' class-data archive (tools/dev-hbase/cds.js), built by a real `java -Xshare:dump`
// from crafted class lists and mapped by a real JVM.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFileSync } = require('node:child_process')
const hbase = require('..')
const { cachedClasspath } = require('../classpath')
const { cdsFiles, cdsFlags, ensureArchive } = require('../cds')
const { buildArchiveInBackground } = require('../cds-background')
const { until } = require('../../../test/support/until')
const { javaBin, javaFlags } = require('../jvm')

const testOptions = (overrides) => hbase.resolveOptions({ ...JSON.parse(process.env.BEACON_TEST_HBASE_OPTIONS || '{}'), ...overrides })

let dir
let jars // two jars of HBase's classpath: the archive's, and one it was not built for

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-cds-'))
  const all = cachedClasspath(testOptions()).split(':')
  jars = ['commons-cli', 'commons-codec'].map((name) => all.find((jar) => path.basename(jar).startsWith(`${name}-`)))
  expect(jars.every(Boolean)).toBe(true)
})

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

function java (args) {
  try {
    return { code: 0, out: execFileSync(javaBin(), [...javaFlags(), ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }) }
  } catch (err) {
    return { code: err.status, out: `${err.stdout}${err.stderr}` }
  }
}

test('off, or per java binary and classpath: another classpath has another archive', () => {
  expect(cdsFiles(testOptions({ cdsDir: 'off' }), jars[0])).toBeNull()
  expect(cdsFlags(null, 'standalone')).toEqual([])
  const opts = testOptions({ cdsDir: dir })
  const a = cdsFiles(opts, jars[0])
  expect(path.dirname(a.archive)).toBe(dir)
  expect(cdsFiles(opts, jars[0])).toEqual(a)
  expect(cdsFiles(opts, jars[1]).archive).not.toBe(a.archive)
})

test('lists recorded by JVMs become one archive that a JVM maps; a stale one never stops a start', async () => {
  const files = cdsFiles(testOptions({ cdsDir: dir }), jars[0])
  // Before there is an archive, each JVM records its classes to a list of its own.
  const record = cdsFlags(files, 'master-1')
  expect(record).toHaveLength(1)
  expect(record[0]).toMatch(/^-XX:DumpLoadedClassList=.*\.master-1\.\d+\.lst$/)
  expect(await ensureArchive(files, jars[0])).toEqual({ built: false, classes: 0, ms: 0 }) // nothing recorded yet
  fs.writeFileSync(record[0].split('=')[1], [
    '# NOTE: Do not modify this file.',
    'java/lang/Object',
    'org/apache/commons/cli/Options',
    'org/apache/commons/cli/Option',
    'org/example/Custom id: 7 super: 0 source: /elsewhere.jar', // a custom loader's: skipped
    'org/apache/commons/cli/Opt' // a list still being written: cut mid-line
  ].join('\n'))
  fs.writeFileSync(cdsFlags(files, 'regionserver-1')[0].split('=')[1], 'java/lang/Object\norg/apache/commons/cli/Parser\n')

  const built = await ensureArchive(files, jars[0])
  expect(built).toMatchObject({ built: true, classes: 4 })
  expect(fs.existsSync(files.archive)).toBe(true)
  expect(fs.readdirSync(dir).filter((f) => f.endsWith('.lst'))).toEqual([]) // the lists went into it
  expect(cdsFlags(files, 'master-1')).toEqual([`-XX:SharedArchiveFile=${files.archive}`, '-Xshare:auto'])
  expect((await ensureArchive(files, jars[0])).built).toBe(false) // once

  // Mapped (-Xshare:on fails when it cannot be), with the conf dir after the archived jars.
  const conf = fs.mkdtempSync(path.join(dir, 'conf-'))
  fs.writeFileSync(path.join(conf, 'hbase-site.xml'), '<configuration/>')
  const mapped = java([`-XX:SharedArchiveFile=${files.archive}`, '-Xshare:on', '-Xlog:cds=info', '-cp', `${jars[0]}:${conf}`, '-version'])
  expect(mapped).toMatchObject({ code: 0 })
  expect(mapped.out).toContain(`Opened archive ${files.archive}.`)
  expect(mapped.out).toMatch(/Mapped static +region/)
  // A classpath the archive was not built for: the JVM says it cannot map it...
  expect(java([`-XX:SharedArchiveFile=${files.archive}`, '-Xshare:on', '-cp', jars[1], '-version']).code).not.toBe(0)
  // ...and with -Xshare:auto, as beacon starts HBase, it runs without it.
  expect(java([`-XX:SharedArchiveFile=${files.archive}`, '-Xshare:auto', '-cp', jars[1], '-version']).code).toBe(0)
})

test('the build runs in a process of its own, once at a time, and leaves the archive and no lock', async () => {
  const files = cdsFiles(testOptions({ cdsDir: fs.mkdtempSync(path.join(dir, 'background-')) }), jars[0])
  const ready = { minClasses: 2, quietMs: 0 } // this test's lists are short and just written
  expect(buildArchiveInBackground(files, jars[0], ready)).toBeNull() // nothing recorded yet
  const list = cdsFlags(files, 'standalone')[0].split('=')[1]
  fs.writeFileSync(list, 'java/lang/Object\n')
  expect(buildArchiveInBackground(files, jars[0], ready)).toBeNull() // fewer classes than a start loads
  fs.appendFileSync(list, 'org/apache/commons/cli/Options\n')
  expect(buildArchiveInBackground(files, jars[0], { ...ready, quietMs: 60000 })).toBeNull() // a JVM still writing it

  const pid = buildArchiveInBackground(files, jars[0], ready)
  expect(pid).toBeGreaterThan(0)
  expect(fs.readFileSync(`${files.archive}.building`, 'utf8').trim()).toBe(String(pid))
  expect(buildArchiveInBackground(files, jars[0], ready)).toBeNull() // one build at a time
  await until('the archive built', () => fs.existsSync(files.archive), 120000)
  await until('the builder gone', () => !fs.existsSync(`${files.archive}.building`), 10000)
  expect(fs.readFileSync(`${files.archive}.build.log`, 'utf8')).toMatch(/class-data archive of 2 classes built/)
  expect(buildArchiveInBackground(files, jars[0], ready)).toBeNull() // built: nothing to do
})

test('a lock left by a builder that died does not stop the next build', () => {
  const files = cdsFiles(testOptions({ cdsDir: fs.mkdtempSync(path.join(dir, 'stale-')) }), jars[0])
  fs.writeFileSync(cdsFlags(files, 'standalone')[0].split('=')[1], 'java/lang/Object\n')
  fs.writeFileSync(`${files.archive}.building`, '2147483000\n') // no such process
  const pid = buildArchiveInBackground(files, jars[0], { minClasses: 1, quietMs: 0 })
  expect(pid).toBeGreaterThan(0)
  process.kill(-pid, 'SIGKILL') // this test's builder and its java, by the group its pid leads
})
