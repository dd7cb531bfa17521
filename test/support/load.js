'use strict'

const http = require('node:http')

// Every load not stopped yet: a test that fails half-way must not leave loops sending requests
// to whatever listens on its port next.
const running = new Set()

/**
 * Closed-loop load: `loops` concurrent loops over one keep-alive agent, each calling
 * `step(i, agent)` again once the previous call settled, until stop() or `maxMs`.
 * @param {{ loops: number, maxMs: number, step: (i: number, agent: http.Agent) => Promise<void> }} options
 * @returns {{ stop: () => Promise<void> }}
 */
function startLoops ({ loops, maxMs, step }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: loops })
  const state = { running: true }
  const stopBy = Date.now() + maxMs
  const all = Array.from({ length: loops }, async (_, i) => {
    while (state.running && Date.now() < stopBy) await step(i, agent)
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
