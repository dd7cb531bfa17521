'use strict'

const { AggregatorRegistry } = require('prom-client')

/**
 * Messages between the cluster primary and its workers, so the admin port (served by every
 * worker) has a host-wide view: `/metrics` aggregates every worker's registry (prom-client's
 * cluster protocol), and an admin change reaches every worker of the host at once.
 *
 *   worker → primary  { type: 'beacon:metrics-req', id }
 *   primary → worker  { type: 'beacon:metrics-res', id, text | error }
 *   worker → primary  { type: 'beacon:broadcast', change }
 *   primary → workers { type: 'beacon:change', change }
 */

const METRICS_TIMEOUT_MS = 5000

/**
 * @typedef {import('./propagation').Change} Change
 * @typedef {{ type: 'beacon:metrics-req', id: number }
 *   | { type: 'beacon:metrics-res', id: number, text?: string, error?: string }
 *   | { type: 'beacon:broadcast', change: Change }
 *   | { type: 'beacon:change', change: Change }} Message one of ours (others, prom-client's, pass by)
 * @typedef {import('node:cluster').Worker} Worker
 */

/**
 * The primary's side: answers metrics requests and relays broadcasts.
 *
 * A worker that just died can still look connected: its exit is not processed yet. A message to it
 * (ours, or prom-client's metrics request) then fails with EPIPE, which node emits as an 'error'
 * event on the worker; unheard, it would end the primary and every worker with it. So every
 * worker gets a listener: the failed send is reported, and the primary replaces the worker on
 * its exit as usual.
 * @param {import('node:cluster').Cluster} cluster
 * @param {{ onSendError?: (err: Error, worker: import('node:cluster').Worker) => void }} [hooks]
 */
function servePrimary (cluster, { onSendError = () => {} } = {}) {
  const aggregator = new AggregatorRegistry()
  const listen = (/** @type {Worker} */ worker) =>
    worker.on('error', (/** @type {Error} */ err) => onSendError(err, worker))
  for (const worker of Object.values(cluster.workers ?? {})) listen(/** @type {Worker} */ (worker))
  cluster.on('fork', listen)
  const send = (/** @type {Worker} */ worker, /** @type {Message} */ msg) => {
    if (worker.isConnected()) worker.send(msg)
  }
  cluster.on('message', (worker, msg) => {
    if (!msg || typeof msg !== 'object') return
    if (msg.type === 'beacon:metrics-req') {
      aggregator.clusterMetrics().then(
        (text) => send(worker, { type: 'beacon:metrics-res', id: msg.id, text }),
        (err) => send(worker, { type: 'beacon:metrics-res', id: msg.id, error: err.message })
      )
    } else if (msg.type === 'beacon:broadcast') {
      // The primary's cluster.workers is always set.
      const workers = /** @type {NonNullable<typeof cluster.workers>} */ (cluster.workers)
      for (const w of Object.values(workers)) {
        send(/** @type {Worker} */ (w), { type: 'beacon:change', change: msg.change })
      }
    }
  })
}

/**
 * A worker's side, as the root factory's `cluster` dependency.
 * @param {import('prom-client').Registry} register this worker's registry, served to the primary
 * @returns {{ metricsText: () => Promise<string>, broadcast: (change: Change) => void,
 *   onChange: (apply: (change: Change) => void) => void }}
 */
function workerLink (register) {
  // eslint-disable-next-line no-new -- registers the worker-side listener for the primary's requests
  new AggregatorRegistry()
  AggregatorRegistry.setRegistries([register])
  /** @type {Map<number, { resolve: (text: string) => void, reject: (err: Error) => void, timer: NodeJS.Timeout }>} */
  const pending = new Map()
  let nextId = 1
  /** @type {((change: Change) => void)|null} */
  let applyChange = null
  // A worker is forked by the primary: it has an IPC channel.
  const proc = /** @type {NodeJS.Process & { send: NonNullable<NodeJS.Process['send']> }} */ (process)
  process.on('message', (/** @type {unknown} */ message) => {
    if (!message || typeof message !== 'object') return
    const msg = /** @type {Message} */ (message)
    if (msg.type === 'beacon:change' && applyChange) applyChange(msg.change)
    if (msg.type === 'beacon:metrics-res' && pending.has(msg.id)) {
      const { resolve, reject, timer } = /** @type {NonNullable<ReturnType<typeof pending.get>>} */ (
        pending.get(msg.id)
      )
      pending.delete(msg.id)
      clearTimeout(timer)
      if (msg.error) reject(new Error(msg.error))
      else resolve(/** @type {string} */ (msg.text)) // an answer without an error has the text
    }
  })
  return {
    metricsText: () => new Promise((resolve, reject) => {
      const id = nextId++
      const timer = setTimeout(() => {
        pending.delete(id)
        reject(new Error('the cluster primary did not answer the metrics request'))
      }, METRICS_TIMEOUT_MS)
      pending.set(id, { resolve, reject, timer })
      proc.send(/** @type {Message} */ ({ type: 'beacon:metrics-req', id }))
    }),
    broadcast: (change) => proc.send(/** @type {Message} */ ({ type: 'beacon:broadcast', change })),
    onChange: (apply) => { applyChange = apply }
  }
}

module.exports = { servePrimary, workerLink }
