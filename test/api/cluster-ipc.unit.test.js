'use strict'

// The cluster primary outlives a message to a worker that has just died (api/cluster-ipc.js):
// the failed send is reported, not thrown. Real processes: test/support/cluster-ipc-fixture.js.

const path = require('node:path')
const { execFile } = require('node:child_process')

test('a broadcast and a metrics request sent to a just-killed worker: EPIPE is reported, the primary lives on', async () => {
  const fixture = path.join(__dirname, '..', 'support', 'cluster-ipc-fixture.js')
  const { code, stdout, stderr } = await new Promise((resolve) => {
    execFile(process.execPath, [fixture], { timeout: 20000 }, (err, so, se) =>
      resolve({ code: err ? err.code ?? err.signal : 0, stdout: so, stderr: se }))
  })
  expect({ code, stderr: stderr.split('\n').slice(0, 8).join('\n') }).toEqual({ code: 0, stderr: '' })
  const report = JSON.parse(stdout.trim().split('\n').pop())
  // The premise: the primary had not yet seen the death when it sent.
  expect(report.connectedWhenSent).toBe(true)
  expect(report.sendErrors.length).toBeGreaterThanOrEqual(2) // the broadcast and prom-client's request
  for (const e of report.sendErrors) expect(e).toEqual({ pid: report.victim, code: 'EPIPE' })
})
