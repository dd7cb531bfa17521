'use strict'

// The V8 flags the primary gives its forks (server.js): each worker the young generation that
// `workerSemiSpaceMiB` names, the rollup process its old-space cap, read from the processes'
// own command lines in /proc.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { startServerProcess } = require('../support/server-process')
const { freePorts } = require('../support/ports')
const { workerPids, rollupPids } = require('../support/pids')

/** A process's command line, its arguments apart. */
const commandLine = (/** @type {number} */ pid) => fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean)

test('each worker runs with --max-semi-space-size when workerSemiSpaceMiB is set; the rollup process keeps its heap cap', async () => {
  const [port, adminPort] = await freePorts(2)
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-worker-flags-'))
  const server = await startServerProcess({ port, adminPort, stateDir, env: { BEACON_WORKER_SEMI_SPACE_MIB: '16' } })
  try {
    const primary = /** @type {number} */ (server.pid)
    const workers = workerPids(primary).map(commandLine)
    const rollup = rollupPids(primary).map(commandLine)
    expect(workers.map((argv) => argv.includes('--max-semi-space-size=16'))).toEqual([true, true])
    expect(rollup.map((argv) => [argv.includes('--max-old-space-size=128'), argv.includes('--max-semi-space-size=16')]))
      .toEqual([[true, false]])
  } finally {
    expect(await server.stop(20000)).toBe(0)
    fs.rmSync(stateDir, { recursive: true, force: true })
  }
})
