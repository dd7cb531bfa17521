'use strict'

const { spawn } = require('node:child_process')
const http = require('node:http')

/**
 * Resolves once `url` answers with `status` (polling), or rejects after `timeoutMs`.
 * @param {string} url
 * @param {{ timeoutMs?: number, status?: number, child?: import('child_process').ChildProcess }} [opts]
 */
async function waitForHttp (url, { timeoutMs = 180000, status = 200, child } = {}) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (child && child.exitCode !== null) throw new Error(`process exited with code ${child.exitCode} before ${url} answered`)
    const got = await new Promise((resolve) => {
      const req = http.get(url, { agent: false, timeout: 1000 }, (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode))
      })
      req.on('error', () => resolve(0))
      req.on('timeout', () => req.destroy())
    })
    if (got === status) return
    if (Date.now() > deadline) throw new Error(`${url} did not answer ${status} within ${timeoutMs} ms (last: ${got})`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

/**
 * Starts a node script in its own process, output prefixed into `log`.
 * @param {string} script
 * @param {string[]} args
 * @param {{ env?: object, log?: (line: string) => void, name?: string, spawnFn?: typeof spawn, nodeArgs?: string[] }} [opts]
 *   spawnFn: how to start it, e.g. pinned to cores with taskset; the returned process must be
 *   node itself (taskset execs its command);
 *   nodeArgs: node's own flags (`--cpu-prof`), before the script
 * @returns {import('child_process').ChildProcess & { stop: (timeoutMs?: number) => Promise<number|null> }}
 */
function startNode (script, args = [], { env = {}, log = () => {}, name = script, spawnFn = spawn, nodeArgs = [] } = {}) {
  const child = /** @type {import('child_process').ChildProcess & { stop: (timeoutMs?: number) => Promise<number|null> }} */ (
    spawnFn(process.execPath, [...nodeArgs, script, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  )
  const forward = (stream) => {
    let rest = ''
    stream.on('data', (chunk) => {
      const lines = (rest + chunk).split('\n')
      rest = lines.pop()
      for (const line of lines) if (line) log(`[${name}] ${line}`)
    })
  }
  forward(child.stdout)
  forward(child.stderr)
  /** SIGTERM, then SIGKILL after the timeout; resolves with the exit code. */
  child.stop = (timeoutMs = 30000) => new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve(child.exitCode)
      return
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.once('exit', (code) => {
      clearTimeout(timer)
      resolve(code)
    })
    child.kill('SIGTERM')
  })
  return child
}

/**
 * Resolves with the first line a child prints on stdout, parsed as JSON (how the fixture server,
 * the delay proxy and the load worker report). Rejects on timeout, exit or unparsable output.
 * @param {import('child_process').ChildProcess} child spawned with stdout piped
 * @param {number} timeoutMs
 * @param {string} what for error messages
 * @returns {Promise<any>}
 */
function firstJsonLine (child, timeoutMs, what) {
  return new Promise((resolve, reject) => {
    let out = ''
    let settled = false
    const finish = (fn, value) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      child.stdout.off('data', onData)
      fn(value)
    }
    const timer = setTimeout(() => finish(reject, new Error(`${what}: no answer within ${timeoutMs} ms`)), timeoutMs)
    const onData = (chunk) => {
      out += chunk
      const nl = out.indexOf('\n')
      if (nl === -1) return
      try {
        finish(resolve, JSON.parse(out.slice(0, nl)))
      } catch {
        finish(reject, new Error(`${what} printed ${JSON.stringify(out.slice(0, nl))}`))
      }
    }
    child.stdout.on('data', onData)
    child.once('error', (err) => finish(reject, new Error(`${what} could not start: ${err.message}`)))
    child.once('exit', (code, signal) => finish(reject, new Error(`${what} exited (${signal || code}) before answering`)))
  })
}

/**
 * The child's side of firstJsonLine(): when `module` is the script node ran, runs `job` on the
 * JSON of its first argument and prints the result as one JSON line; a failure goes to stderr
 * and sets exit code 1. The job ends itself when its parent process goes away.
 * @param {unknown} module the calling script's `module`
 * @param {string} name for the error line
 * @param {(arg: any) => Promise<unknown>} job
 */
function jsonJobMain (module, name, job) {
  if (require.main !== module) return
  // The parent is gone (killed, or it died) when this process is handed to another: a job
  // outliving its bench would keep loading the machine and the bench's HBase.
  const parent = process.ppid
  setInterval(() => {
    if (process.ppid === parent) return
    process.stderr.write(`${name}: the bench that started this job is gone; stopping\n`)
    process.exit(1)
  }, 1000).unref()
  job(JSON.parse(process.argv[2])).then((result) => {
    process.stdout.write(JSON.stringify(result) + '\n')
  }, (err) => {
    process.stderr.write(`${name}: ${err.stack || err.message}\n`)
    process.exitCode = 1
  })
}

module.exports = { waitForHttp, startNode, firstJsonLine, jsonJobMain }
