'use strict'

// HAProxy's admin socket: one command per connection, the answer is everything it writes
// before closing. `show stat` is CSV with a `# pxname,svname,...` header line.

const net = require('node:net')

/**
 * Sends one command to the admin socket and resolves with the whole answer.
 * @param {string} socketPath
 * @param {string} command e.g. "show stat"
 * @param {number} [timeoutMs]
 * @returns {Promise<string>}
 */
function adminCommand (socketPath, command, timeoutMs = 2000) {
  return new Promise((resolve, reject) => {
    const chunks = []
    const socket = net.connect(socketPath)
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`tools/lb: no answer to "${command}" within ${timeoutMs} ms`)))
    socket.on('connect', () => socket.end(command + '\n'))
    socket.on('data', (c) => chunks.push(c))
    socket.on('error', reject)
    socket.on('close', (hadError) => { if (!hadError) resolve(Buffer.concat(chunks).toString('utf8')) })
  })
}

/**
 * Parses `show stat` CSV into one object per line, keyed by the header's field names; numeric
 * fields become numbers, empty ones null.
 * @param {string} csv
 * @returns {Array<Record<string, string|number|null>>}
 */
function parseStatCsv (csv) {
  const lines = csv.split('\n').filter((l) => l.trim() !== '')
  if (!lines.length || !lines[0].startsWith('# ')) {
    throw new Error(`tools/lb: not a "show stat" answer: ${JSON.stringify(csv.slice(0, 200))}`)
  }
  const fields = lines[0].slice(2).split(',')
  return lines.slice(1).map((line) => {
    const values = line.split(',')
    /** @type {Record<string, string|number|null>} */
    const row = {}
    fields.forEach((name, i) => {
      if (!name) return
      const v = values[i] ?? ''
      row[name] = v === '' ? null : /^-?\d+$/.test(v) ? Number(v) : v
    })
    return row
  })
}

/**
 * @typedef {{ name: string, status: string, selected: number, sessions: number, active: number,
 *   connectErrors: number, responseErrors: number, retries: number, redispatches: number,
 *   checkStatus: string|null, downTransitions: number }} ServerStat
 *   status: UP, DOWN, "UP 1/2" (going down), "DOWN 1/2" (coming up), MAINT...; selected: how
 *   often the balancer picked it (lbtot); sessions: connections it got (stot)
 */

/**
 * The servers of one backend, from `show stat`.
 * @param {string} socketPath
 * @param {string} backend
 * @returns {Promise<ServerStat[]>}
 */
async function serverStats (socketPath, backend) {
  const rows = parseStatCsv(await adminCommand(socketPath, 'show stat'))
  return rows
    .filter((r) => r.pxname === backend && r.svname !== 'BACKEND' && r.svname !== 'FRONTEND')
    .map((r) => ({
      name: String(r.svname),
      status: String(r.status),
      selected: Number(r.lbtot) || 0,
      sessions: Number(r.stot) || 0,
      active: Number(r.scur) || 0,
      connectErrors: Number(r.econ) || 0,
      responseErrors: Number(r.eresp) || 0,
      retries: Number(r.wretr) || 0,
      redispatches: Number(r.wredis) || 0,
      checkStatus: r.check_status === null ? null : String(r.check_status),
      downTransitions: Number(r.chkdown) || 0
    }))
}

module.exports = { adminCommand, parseStatCsv, serverStats }
