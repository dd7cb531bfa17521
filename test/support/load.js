'use strict'

const http = require('node:http')
const { setTimeout: sleep } = require('node:timers/promises')

// Every load not stopped yet: a test that fails half-way must not leave loops sending requests
// to whatever listens on its port next.
const running = new Set()

/**
 * Closed-loop load: `loops` concurrent loops over one keep-alive agent, each calling
 * `step(i, agent)` again once the previous call settled, until stop() or `maxMs`.
 *
 * With `paceMs`, a loop starts a step at most every `paceMs` (a think time: the rest of the
 * interval after the answer), so the load offers at most loops × 1000 / paceMs requests a
 * second. Unpaced loops take every cycle the machine has, which a fault test under "load"
 * rarely needs and which the other test lane (test/lanes.js) then lacks.
 * @param {{ loops: number, maxMs: number, paceMs?: number, step: (i: number, agent: http.Agent) => Promise<void> }} options
 * @returns {{ stop: () => Promise<void> }}
 */
function startLoops ({ loops, maxMs, paceMs = 0, step }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: loops })
  const state = { running: true }
  const stopBy = Date.now() + maxMs
  const all = Array.from({ length: loops }, async (_, i) => {
    while (state.running && Date.now() < stopBy) {
      const started = Date.now()
      await step(i, agent)
      if (paceMs > 0) await sleep(Math.max(0, started + paceMs - Date.now()))
    }
  })
  const load = {
    async stop () {
      running.delete(load)
      state.running = false
      await Promise.all(all)
      agent.destroy()
    }
  }
  running.add(load)
  return load
}

/** Stops every load still running (use as `afterEach(stopRunningLoads)`). */
async function stopRunningLoads () {
  for (const load of running) await load.stop()
}

module.exports = { startLoops, stopRunningLoads }
