'use strict'

/**
 * The bench's `faults` scenario: the long runs of the app-host fault tests, which `npm test` runs
 * short. It runs those jest files (their assertions hold here too) with long durations; each test
 * appends its figures to a JSON-lines file (test/support/fault-report.js), from which this builds
 * its section of the report:
 * - memory (test/faults/memory-outage.test.js): `server.js` with 2 workers under sample4 + sample5
 *   load through an HBase outage of --fault-outage-seconds; worker RSS every second, the cap,
 *   the drain;
 * - slow (test/faults/hbase-slow.test.js): every RPC to HBase through a delay proxy,
 *   --fault-phase-seconds per phase at 20 ms, 200 ms and 2 s per round trip, under load.
 * Each test starts an HBase of its own (own state dir and ports), so nothing else runs meanwhile.
 */

const fs = require('node:fs')
const path = require('node:path')
const { spawn } = require('node:child_process')

const ROOT = path.join(__dirname, '..', '..', '..')
const TESTS = Object.freeze({ memory: 'test/faults/memory-outage.test.js', slow: 'test/faults/hbase-slow.test.js' })

/**
 * Runs jest on `files` with `env`, its output line by line to `log`.
 * @returns {Promise<{ code: number|null, tail: string[] }>} exit code and the last lines
 */
function runJest (files, env, log) {
  const jest = require.resolve('jest/bin/jest', { paths: [ROOT] })
  const child = spawn(process.execPath, [jest, '--selectProjects=faults', '--runInBand', '--runTestsByPath', ...files], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  const tail = []
  const onLine = (line) => {
    log(`faults| ${line}`)
    tail.push(line)
    if (tail.length > 40) tail.shift()
  }
  for (const stream of [child.stdout, child.stderr]) {
    let rest = ''
    stream.setEncoding('utf8')
    stream.on('data', (chunk) => {
      const lines = (rest + chunk).split('\n')
      rest = lines.pop()
      lines.forEach(onLine)
    })
    stream.on('end', () => { if (rest) onLine(rest) })
  }
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, tail })))
}

/** @param {string} file @returns {Record<string, any>} test name -> its figures */
function readReports (file) {
  if (!fs.existsSync(file)) return {}
  const out = {}
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue
    const { name, ...data } = JSON.parse(line)
    out[name] = data
  }
  return out
}

/** @param {any} m the memory test's figures @returns {string[]} markdown */
function memoryMarkdown (m) {
  const lines = [
    `### Memory through a ${m.outageMs / 1000} s HBase outage under load`,
    '',
    `sample4 ${m.ok.sample4.toLocaleString('en-US')} × 200 and sample5 ` +
      `${m.ok.sample5.toLocaleString('en-US')} × 200, ${m.failed} failed; ` +
      `${m.rows.toLocaleString('en-US')} access-log rows for ` +
      `${m.expectedRows.toLocaleString('en-US')} answered sample5 (warm-up included); ` +
      `every row in HBase ${(m.drainedMs / 1000).toFixed(1)} s after HBase was back (the load ran 15 s more)` +
      (m.rolledMs
        ? `, every minute counted by the rollup job in ${(m.rolledMs / 1000).toFixed(1)} s (part of draining)`
        : '') + `. Cap: healthy peak + ${m.capMiB} MiB per worker.`,
    '',
    '| worker | healthy peak MiB | outage peak MiB | recovering + draining peak MiB | after MiB | cap MiB |',
    '|---:|---:|---:|---:|---:|---:|'
  ]
  for (const w of m.summary) {
    lines.push(`| ${w.worker} | ${w.healthyPeak} | ${w.outagePeak} | ${w.recoveringPeak} | ${w.after} | ${w.healthyPeak + m.capMiB} |`)
  }
  return lines
}

/** @param {any} s the slow test's figures @returns {string[]} markdown */
function slowMarkdown (s) {
  const healthy = s.phases.find((r) => r.phase === 'healthy')
  const lines = [
    `### A slow HBase: ${s.phaseMs / 1000} s per phase under load`,
    '',
    'Every RPC between the app and HBase through a delay proxy. Cached endpoints: sample3 + sample5 (closed loop); sample2 open loop at ' +
      `${s.sample2Rate}/s, its deadline ${s.deadlineMs} ms; ` +
      `at most ${s.maxInFlight2} sample2 requests in flight; the access log ` +
      `drained ${(s.drainMs / 1000).toFixed(1)} s after the load stopped.`,
    '',
    '| phase | round trip ms | cached answers | cached non-200 | cached p50 ms | cached p99 ms | p99 − healthy p99 ms | sample2 ' +
      'answers ' +
      '| sample2 503 | sample2 max ms | log queue max | spilled to journal | heap max MiB | heap retained MiB | RSS max MiB |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|'
  ]
  for (const r of s.phases) {
    const delta = healthy ? (r.cachedP99 - healthy.cachedP99).toFixed(2) : ''
    lines.push(`| ${r.phase} | ${r.rttMs} | ${r.cached} | ${r.cachedNon200} | ${r.cachedP50} | ${r.cachedP99} | ${delta} | ${r.sample2} ` +
      `| ${r.sample2_503} | ${r.sample2MaxMs} | ${r.maxQueueDepth} | ${r.spilled} | ${r.maxHeapMb} | ${r.retainedHeapMb} | ${r.maxRssMb} |`)
  }
  return lines
}

/**
 * @param {{ params: Record<string, any>, log: (line: string) => void, stateDir: string }} ctx
 * @returns {Promise<object>} the report section: title, description, markdown and the figures
 */
async function faults (ctx) {
  const p = ctx.params
  const names = p.faultTests
  const reportFile = path.join(ctx.stateDir, 'faults.jsonl')
  fs.mkdirSync(ctx.stateDir, { recursive: true })
  fs.rmSync(reportFile, { force: true })
  ctx.log(`faults: ${names.join(', ')} (outage ${p.faultOutageSeconds} s, ${p.faultPhaseSeconds} s per slow phase)…`)
  const started = Date.now()
  const { code, tail } = await runJest(names.map((n) => TESTS[n]), {
    BEACON_FAULT_REPORT: reportFile,
    BEACON_MEMORY_OUTAGE_MS: String(p.faultOutageSeconds * 1000),
    BEACON_SLOW_PHASE_MS: String(p.faultPhaseSeconds * 1000)
  }, ctx.log)
  const figures = readReports(reportFile)
  const passed = code === 0
  const markdown = []
  if (!passed) markdown.push(`**The fault tests failed (jest exit ${code}).** Their last lines:`, '', '```', ...tail, '```', '')
  if (figures.memory) markdown.push(...memoryMarkdown(figures.memory), '')
  if (figures.slow) markdown.push(...slowMarkdown(figures.slow), '')
  return {
    title: 'Faults on the app host (long runs)',
    description: `The long runs of the fault tests that \`npm test\` runs short (${names.map((n) => TESTS[n]).join(', ')}), with ` +
      `their assertions, each on an HBase of its own; ${Math.round((Date.now() - started) / 1000)} s in all. Not part of --quick.`,
    markdown,
    result: { passed, exitCode: code, ...figures }
  }
}

module.exports = { faults, TESTS, memoryMarkdown, slowMarkdown, readReports }
