'use strict'

const { execFile } = require('node:child_process')

const IP_TIMEOUT_MS = 10000

/**
 * A thin wrapper around iproute2's `ip`, always through execFile with an argument array (never
 * a shell string), bounded in time.
 * @param {{ ipPath?: string, timeoutMs?: number }} [io]
 */
function createIp ({ ipPath = 'ip', timeoutMs = IP_TIMEOUT_MS } = {}) {
  /**
   * @param {string[]} args
   * @param {{ netns?: string }} [where] run inside this namespace (`ip -n NAME ...`)
   * @returns {Promise<string>} stdout
   */
  function run (args, { netns } = {}) {
    const argv = netns ? ['-n', netns, ...args] : args
    return new Promise((resolve, reject) => {
      execFile(ipPath, argv, { timeout: timeoutMs, killSignal: 'SIGKILL' }, (err, stdout, stderr) => {
        if (!err) return resolve(stdout)
        const detail = String(stderr).trim() || err.message
        const wrapped = /** @type {Error & { code?: any, stderr?: string }} */ (
          new Error(`${ipPath} ${argv.join(' ')}: ${detail}`, { cause: err })
        )
        wrapped.code = err.code // 'ENOENT' when `ip` is missing
        wrapped.stderr = String(stderr)
        reject(wrapped)
      })
    })
  }

  /** Like run(), but tolerates "already gone" errors (for idempotent deletes). */
  async function runIgnoringMissing (args, where) {
    try {
      await run(args, where)
      return true
    } catch (err) {
      if (/Cannot find device|No such file or directory/.test(err.stderr || '')) return false
      throw err
    }
  }

  async function json (args, where) {
    const out = await run(['-j', ...args], where)
    return out.trim() ? JSON.parse(out) : []
  }

  return {
    path: ipPath,
    run,
    runIgnoringMissing,
    /** @returns {Promise<string[]>} names of the named network namespaces (/run/netns) */
    async netnsList () {
      return (await json(['netns', 'list'])).map((n) => n.name)
    },
    /** @returns {Promise<Array<Record<string, any>>>} links with details (`-d`: kind, master) */
    links (where) {
      return json(['-d', 'link', 'show'], where)
    },
    /** @returns {Promise<Array<Record<string, any>>>} */
    addresses (dev, where) {
      return json(['-4', 'addr', 'show', 'dev', dev], where)
    },
    /** @returns {Promise<Array<Record<string, any>>>} */
    routes (where) {
      return json(['-4', 'route', 'show'], where)
    },
    /** @returns {Promise<number[]>} pids of processes inside a namespace */
    async pids (netns) {
      const out = await run(['netns', 'pids', netns])
      return out.split('\n').filter(Boolean).map(Number)
    }
  }
}

module.exports = { createIp }
