'use strict'

// Checks of a topology that is up: a real TCP round trip between every pair of hosts, and
// whether tc netem can shape the links.

const path = require('node:path')
const { execFile } = require('node:child_process')

const PROBE_SCRIPT = path.join(__dirname, 'probe.js')

/**
 * A listener in every namespace, then from every namespace one TCP round trip to each other
 * host. The listener reports the peer address it saw, which must be the sender's own address.
 * @param {{ opts: any, exec: (host: string, command: string, args?: string[], spawnOptions?: object) => any,
 *   nodePath: string, timeoutMs: number, log: (line: string) => void }} options
 * @returns {Promise<Array<{ from: string, to: string, rttMs: number }>>}
 */
async function verifyHosts ({ opts, exec, nodePath, timeoutMs, log }) {
  const deadline = Date.now() + timeoutMs
  const names = opts.hostNames
  const listeners = []
  try {
    const ports = {}
    for (const name of names) {
      const child = exec(name, nodePath, [PROBE_SCRIPT, 'serve', opts.hosts[name].address, String(timeoutMs)], {
        stdio: ['pipe', 'pipe', 'pipe']
      })
      listeners.push(child)
      ports[name] = child
    }
    for (const name of names) ports[name] = (await firstJsonLine(ports[name], deadline, `listener in ${opts.hosts[name].netns}`)).port
    const perHost = await Promise.all(names.map(async (from) => {
      const targets = names.filter((to) => to !== from).map((to) => `${to}=${opts.hosts[to].address}:${ports[to]}`)
      const child = exec(from, nodePath, [PROBE_SCRIPT, 'connect', String(Math.max(deadline - Date.now(), 1)), ...targets], {
        stdio: ['ignore', 'pipe', 'pipe']
      })
      const results = await firstJsonLine(child, deadline, `client in ${opts.hosts[from].netns}`)
      return results.map((r) => ({ from, ...r }))
    }))
    const results = perHost.flat()
    const failures = results.filter((r) => !r.ok || r.seen !== opts.hosts[r.from].address)
    if (failures.length) {
      const lines = failures.map(
        (r) =>
          `${r.from} -> ${r.name} (${r.address}:${r.port}): ${r.ok
            ? `server saw ${r.seen}, expected ${opts.hosts[r.from].address}`
            : r.error}`
      )
      throw new Error(`topology: connectivity check failed:\n  ${lines.join('\n  ')}`)
    }
    log(`topology: verified ${results.length} TCP round trips between ${names.join(', ')}`)
    return results.map((r) => ({ from: r.from, to: r.name, rttMs: r.rttMs }))
  } finally {
    for (const child of listeners) {
      child.stdin.end()
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    }
  }
}

/**
 * netem is the usual way to add latency; probed on our own veth so the report can say
 * whether it was an option. (Here: no sch_netem module, hence delay-proxy.js.)
 * @param {string} dev a veth of the topology
 * @param {string} tcPath
 * @returns {Promise<{ available: boolean, reason: string|null }>}
 */
function probeNetemOn (dev, tcPath) {
  const tc = (args) => new Promise((resolve) => {
    execFile(tcPath, args, { timeout: 5000 }, (err, stdout, stderr) =>
      resolve(err ? (err.code === 'ENOENT' ? `${tcPath} not found` : String(stderr).trim() || err.message) : null)
    )
  })
  return tc(['qdisc', 'add', 'dev', dev, 'root', 'netem', 'delay', '1ms']).then(async (error) => {
    if (error) return { available: false, reason: `tc qdisc add ... netem: ${error}` }
    await tc(['qdisc', 'del', 'dev', dev, 'root'])
    return { available: true, reason: null }
  })
}

/**
 * The first JSON line a child prints, within the deadline.
 * @param {any} child
 * @param {number} deadline epoch ms
 * @param {string} what for error messages
 * @returns {Promise<any>}
 */
function firstJsonLine (child, deadline, what) {
  return new Promise((resolve, reject) => {
    let out = ''
    let err = ''
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`topology: ${what} gave no answer in time; stderr: ${err.trim()}`))
    }, Math.max(deadline - Date.now(), 1))
    const done = (fn, value) => {
      clearTimeout(timer)
      fn(value)
    }
    child.stderr.on('data', (chunk) => { err += chunk })
    child.stdout.on('data', (chunk) => {
      out += chunk
      const nl = out.indexOf('\n')
      if (nl === -1) return
      try {
        done(resolve, JSON.parse(out.slice(0, nl)))
      } catch (e) {
        done(reject, new Error(`topology: ${what} printed ${JSON.stringify(out.slice(0, nl))}`))
      }
    })
    child.on('error', (e) => done(reject, new Error(`topology: ${what} could not start: ${e.message}`)))
    // 'close', not 'exit': a child can exit before its last stdout chunk is read here.
    child.on('close', (code, signal) => {
      if (!out.includes('\n')) {
        done(reject, new Error(`topology: ${what} exited (${signal || code}) before answering; stderr: ${err.trim()}`))
      }
    })
  })
}

module.exports = { verifyHosts, probeNetemOn, firstJsonLine }
