'use strict'

/**
 * The closed loop driven by wrk (Debian's `wrk`, C and LuaJIT) instead of autocannon: the
 * generator the issues' figures and the seed's run used. It costs a fraction of autocannon's CPU
 * per request, so on cores that the generator shares with the server the server is saturated
 * harder and its CPU per request reads closer to what a host of its own would see.
 *
 * The requests are planned here (the same path picker as the other generators) and written into
 * a file that each wrk thread's Lua script formats once at start, then picks from at random. wrk counts
 * only answers with a status above 399 as errors; every other answer is counted as a 200 (the
 * bench sends no conditional request, so a data-plane endpoint answers 200 or an error).
 */

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn } = require('node:child_process')

/** Linux's USER_HZ: /proc reports CPU in these ticks. */
const CLK_TCK = 100
/** Paths planned per job: enough for ids 1..10000 drawn at random to hit most of them. */
const PLANNED = 20000

/**
 * One planned request per line for the Lua script: method, path, headers (`name: value` joined by
 * \x01) and body, tab-separated. Paths, header values and JSON bodies hold no tab or newline.
 * @param {Array<{ path: string, method?: string, headers?: Record<string, string>, body?: string }>} requests
 * @returns {string}
 */
function planLines (requests) {
  return requests.map((r) => {
    const headers = Object.entries(r.headers || {}).map(([k, v]) => `${k}: ${v}`).join('\x01')
    const line = [r.method || 'GET', r.path, headers, r.body ?? ''].join('\t')
    if (/[\n\r]/.test(line) || line.split('\t').length !== 4) throw new TypeError('wrk: a planned request holds a tab or newline')
    return line
  }).join('\n') + '\n'
}

/**
 * The Lua script of one job: each thread formats the planned requests once, then sends them
 * in random order; `done` prints the summary as one JSON line.
 * @param {string} planFile
 * @returns {string}
 */
function luaScript (planFile) {
  return [
    'local formatted = {}',
    'init = function()',
    `  for line in io.lines(${JSON.stringify(planFile)}) do`,
    '    local method, path, headerText, body = line:match("^([^\\t]*)\\t([^\\t]*)\\t([^\\t]*)\\t(.*)$")',
    '    local headers = {}',
    '    for name, value in headerText:gmatch("([^:\\1]+): ([^\\1]*)") do headers[name] = value end',
    '    formatted[#formatted + 1] = wrk.format(method, path, headers, body ~= "" and body or nil)',
    '  end',
    'end',
    'request = function() return formatted[math.random(#formatted)] end',
    'done = function(summary, latency)',
    '  local e = summary.errors',
    '  io.write(string.format(\'\\nWRK_JSON {"requests":%d,"durationUs":%d,"bytes":%d,"connect":%d,"read":%d,"write":%d,' +
      '"status":%d,"timeout":%d,"meanUs":%f,"stdevUs":%f,"p50Us":%d,"p90Us":%d,"p99Us":%d,"p999Us":%d,"maxUs":%d}\\n\',',
    '    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,',
    '    latency.mean, latency.stdev, latency:percentile(50), latency:percentile(90), latency:percentile(99),',
    '    latency:percentile(99.9), latency.max))',
    'end',
    ''
  ].join('\n')
}

/**
 * Runs wrk for `durationMs` and summarizes it in the load worker's fields.
 * @param {{ host: string, port: number, connections: number, threads?: number, durationMs: number, timeoutMs?: number,
 *   next: () => { path: string, method?: string, headers?: Record<string, string>, body?: string } }} job
 * @returns {Promise<Record<string, any>>} rps, latencies (ms), requests, ok, non2xx, errors, sent,
 *   statusCounts, generatorCpuUs (wrk's own, from its rusage)
 */
async function runWrk ({ host, port, connections, threads = 2, durationMs, timeoutMs = 10000, next }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-wrk-'))
  const plan = path.join(dir, 'plan.tsv')
  const script = path.join(dir, 'plan.lua')
  fs.writeFileSync(plan, planLines(Array.from({ length: PLANNED }, next)))
  fs.writeFileSync(script, luaScript(plan))
  const args = [`-t${threads}`, `-c${connections}`, `-d${Math.max(1, Math.round(durationMs / 1000))}s`,
    '--timeout', `${Math.ceil(timeoutMs / 1000)}s`, '-s', script, `http://${host}:${port}/`]
  try {
    const { stdout, cpuUs } = await runChild('wrk', args)
    const line = stdout.split('\n').find((l) => l.startsWith('WRK_JSON '))
    if (!line) throw new Error(`wrk printed no summary: ${stdout.slice(-500)}`)
    return summarize(JSON.parse(line.slice('WRK_JSON '.length)), cpuUs)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * @param {Record<string, number>} w wrk's numbers (µs)
 * @param {number} cpuUs
 */
function summarize (w, cpuUs) {
  const ms = (us) => Math.round(us) / 1000
  const socketErrors = w.connect + w.read + w.write + w.timeout
  const ok = w.requests - w.status
  return {
    generator: 'wrk',
    rps: Math.round(w.requests / (w.durationUs / 1e6) * 100) / 100,
    latencyMean: ms(w.meanUs),
    latencyStdev: ms(w.stdevUs),
    p50: ms(w.p50Us),
    p90: ms(w.p90Us),
    p99: ms(w.p99Us),
    p999: ms(w.p999Us),
    max: ms(w.maxUs),
    requests: w.requests,
    ok,
    non2xx: w.status,
    errors: socketErrors,
    sent: w.requests + socketErrors,
    statusCounts: w.status ? { 200: ok, error: w.status } : { 200: ok },
    generatorCpuUs: cpuUs
  }
}

/**
 * @param {string} command
 * @param {string[]} args
 * @returns {Promise<{ stdout: string, cpuUs: number }>} cpuUs: the child's user + system time
 */
function runChild (command, args) {
  return new Promise((resolve, reject) => {
    const before = childrenCpuUs()
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c) => { stdout += c })
    child.stderr.on('data', (c) => { stderr += c })
    child.once('error', reject)
    child.once('exit', (code) => {
      if (code !== 0) {
        reject(new Error(`wrk exited ${code}: ${stderr.trim().slice(-500)}`))
        return
      }
      resolve({ stdout, cpuUs: childrenCpuUs() - before })
    })
  })
}

/**
 * The CPU of this process's reaped children (cutime + cstime of /proc/self/stat): wrk's own, once
 * it has exited. In clock ticks (10 ms), so ±20 ms over a run; null-free: 0 off Linux.
 * @returns {number} µs
 */
function childrenCpuUs () {
  try {
    const text = fs.readFileSync('/proc/self/stat', 'utf8')
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ')
    // From field 3 (state) on: cutime is field 16, cstime 17 (man 5 proc).
    return (Number(f[13]) + Number(f[14])) * 1e6 / CLK_TCK
  } catch {
    return 0
  }
}

module.exports = { runWrk, planLines, luaScript }
