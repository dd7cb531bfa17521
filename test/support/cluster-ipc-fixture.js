'use strict'

// A real cluster primary (api/cluster-ipc.js servePrimary) and two workers (workerLink). The
// primary SIGKILLs worker A and, before its event loop can learn of the death, relays a broadcast
// and asks for the host's metrics: both send to the dead worker and fail with EPIPE. Prints one
// JSON line with the failed sends it was told of, and exits 0 if it is still alive 500 ms later.

const cluster = require('node:cluster')
const { Registry } = require('prom-client')
const { servePrimary, workerLink } = require('../../api/cluster-ipc')

if (cluster.isWorker) {
  workerLink(new Registry())
  setInterval(() => {}, 60000)
} else {
  const sendErrors = []
  servePrimary(cluster, { onSendError: (err, worker) => sendErrors.push({ pid: worker.process.pid, code: err.code }) })
  const workers = [cluster.fork(), cluster.fork()]
  let online = 0
  cluster.on('online', () => {
    if (++online < workers.length) return
    const [victim, other] = workers
    process.kill(victim.process.pid, 'SIGKILL')
    // Block the event loop while the kernel ends the victim: the primary still sees it connected.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300)
    const connected = victim.isConnected()
    cluster.emit('message', other, { type: 'beacon:broadcast', change: { probe: 1 } })
    cluster.emit('message', other, { type: 'beacon:metrics-req', id: 1 })
    setTimeout(() => {
      console.log(JSON.stringify({ victim: victim.process.pid, connectedWhenSent: connected, sendErrors }))
      other.process.kill('SIGKILL')
      process.exit(0)
    }, 500)
  })
}
