'use strict'

// The V8 flags the primary gives its forks (server.js): each worker the young generation that
// `workerSemiSpaceMiB` names, the rollup process its old-space cap, read from the processes'
// own command lines in /proc.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { startServerProcess } = require('../support/server-process')
const { freePorts } = require('../support/ports')

/** The command lines of `pid`'s children. */
function childCommandLines (pid) {
  const found = []
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (ppid === pid) found.push(fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean))
    } catch {
      // gone meanwhile
    }
  }
  return found
}

test('each worker runs with --max-semi-space-size when workerSemiSpaceMiB is set; the rollup process keeps its heap cap', async () => {
  const [port] = await freePorts(1)
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-worker-flags-'))
  const server = await startServerProcess({ port, stateDir, env: { BEACON_WORKER_SEMI_SPACE_MIB: '16' } })
  try {
    const forks = childCommandLines(/** @type {number} */ (server.pid)).filter((argv) => argv.some((a) => a.endsWith('server.js')))
    const workers = forks.filter((argv) => argv.includes('--max-semi-space-size=16'))
    const rollup = forks.filter((argv) => argv.includes('--max-old-space-size=128'))
    expect({ workers: workers.length, rollup: rollup.length, forks: forks.length }).toEqual({ workers: 2, rollup: 1, forks: 3 })
    expect(rollup[0]).not.toContain('--max-semi-space-size=16')
  } finally {
    expect(await server.stop(20000)).toBe(0)
    fs.rmSync(stateDir, { recursive: true, force: true })
  }
})
