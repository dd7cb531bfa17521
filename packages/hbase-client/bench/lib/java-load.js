'use strict'

/**
 * Drives tools/dev-hbase/java/BeaconHBaseLoad.java: one long-lived JVM holding one connection of
 * HBase's own Java client, warmed once and asked for workload after workload over stdin (one
 * "WORKLOAD COUNT" line, one JSON line back), so that packages/hbase-client/bench/run.js can measure what the
 * Java client costs the HBase server next to what beacon's native client costs it.
 */

const readline = require('node:readline')
const { spawn } = require('node:child_process')
const { ensureClasspath } = require('../../../../tools/dev-hbase')
const { ensureToolCompiled, toolJvmArgs } = require('../../../../tools/dev-hbase')
const { javaBin, javaFlags } = require('../../../../tools/dev-hbase')
const { CONFIG_TABLE, CONFIG_FAMILY, LOG_TABLE, LOG_FAMILY, DEFAULT_LOG_BUCKETS } = require('./workloads')

const HEAP = ['-Xms256m', '-Xmx1g']
const CLOSE_TIMEOUT_MS = 15000

/**
 * @typedef {object} JavaLoad
 * @property {number} pid the client JVM's
 * @property {(workload: string, count: number) => Promise<Record<string, any>>} run one workload
 *   (`warmup` takes seconds), its JSON summary
 * @property {() => Promise<void>} close ends stdin; the JVM closes its connection and exits
 */

/**
 * Compiles (if needed) and starts the load JVM, and waits until it has connected.
 * @param {object} options
 * @param {Readonly<Record<string, any>>} options.hbaseOpts tools/dev-hbase resolveOptions(): state dir
 *   with the classpath cache, classes and log4j configuration
 * @param {string[]} options.bootstrap "host:port" of the master/RegionServer
 * @param {Record<string, number>} options.N the bench's parameters (rows, concurrency, 'multi-get', batch, inflight)
 * @param {(line: string) => void} [options.log]
 * @returns {Promise<JavaLoad>}
 */
async function startJavaLoad ({ hbaseOpts, bootstrap, N, log = () => {} }) {
  const classpath = await ensureClasspath(hbaseOpts, { log })
  await ensureToolCompiled(hbaseOpts, classpath)
  const args = [
    'serve', '--bootstrap', bootstrap.join(','),
    '--config-table', CONFIG_TABLE, '--config-family', CONFIG_FAMILY,
    '--log-table', LOG_TABLE, '--log-family', LOG_FAMILY, '--buckets', String(DEFAULT_LOG_BUCKETS),
    ...['rows', 'concurrency', 'multi-get', 'batch', 'inflight'].flatMap((k) => [`--${k}`, String(N[k])])
  ]
  const child = spawn(javaBin(), [...HEAP, ...toolJvmArgs(hbaseOpts, classpath, 'BeaconHBaseLoad', args, javaFlags())], {
    stdio: ['pipe', 'pipe', 'pipe']
  })
  const stderrTail = []
  readline.createInterface({ input: child.stderr }).on('line', (line) => {
    stderrTail.push(line)
    if (stderrTail.length > 20) stderrTail.shift()
  })
  /** @type {Array<{ resolve: (v: any) => void, reject: (e: Error) => void }>} */
  const waiting = []
  let exited = null
  const failAll = (err) => { for (const w of waiting.splice(0)) w.reject(err) }
  readline.createInterface({ input: child.stdout }).on('line', (line) => {
    let value
    try {
      value = JSON.parse(line)
    } catch {
      return // not an answer (a stray library line)
    }
    const w = waiting.shift()
    if (!w) return
    if (value.error) w.reject(new Error(`BeaconHBaseLoad: ${value.error}`))
    else w.resolve(value)
  })
  const exit = new Promise((resolve) => child.on('close', (code, signal) => {
    exited = { code, signal }
    failAll(new Error(`BeaconHBaseLoad exited (${signal || code}); stderr:\n${stderrTail.join('\n')}`))
    resolve(exited)
  }))
  child.on('error', (err) => failAll(err))
  child.stdin.on('error', () => {}) // a dead JVM's pipe: its exit rejects the waiters
  const next = () =>
    new Promise((resolve, reject) => (exited ? reject(new Error('BeaconHBaseLoad is not running')) : waiting.push({ resolve, reject })))

  await next() // {"ready":true}: connected through the bootstrap registry
  return {
    pid: child.pid,
    run (workload, count) {
      const answer = next()
      child.stdin.write(`${workload} ${count}\n`)
      return answer
    },
    async close () {
      if (exited) return
      child.stdin.end()
      const timer = setTimeout(() => child.kill('SIGTERM'), CLOSE_TIMEOUT_MS)
      await exit
      clearTimeout(timer)
    }
  }
}

module.exports = { startJavaLoad }
