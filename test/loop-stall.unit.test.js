'use strict'

// test/support/loop-stall.js tells a loop held up by work from one held up waiting: a blocking
// wait (Atomics.wait: off the CPU, as a process the machine does not run) against a busy loop.

const { monitorLoopStalls } = require('./support/loop-stall')

const tick = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

test('a 400 ms wait off the CPU delays the loop but is not busy; 400 ms of work is', async () => {
  const waited = monitorLoopStalls({ resolution: 10 })
  waited.enable()
  await tick(30)
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 400)
  await tick(30)
  waited.disable()
  expect(waited.lateMaxMs).toBeGreaterThan(350)
  expect(waited.busyMaxMs).toBeLessThan(150)

  const worked = monitorLoopStalls({ resolution: 10 })
  worked.enable()
  await tick(30)
  const before = process.cpuUsage()
  while ((process.cpuUsage(before).user + process.cpuUsage(before).system) / 1000 < 400) { /* work */ }
  await tick(30)
  worked.disable()
  expect(worked.lateMaxMs).toBeGreaterThan(350)
  expect(worked.busyMaxMs).toBeGreaterThan(350)
})
