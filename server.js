'use strict'

/**
 * Entry point: `npm start`. The primary validates settings, brings up the embedded local HBase
 * when no HBase address is configured, forks one worker per core and supervises them; workers
 * serve the data plane (PORT) and the admin plane (ADMIN_PORT). SIGTERM/SIGINT shut down
 * gracefully: stop accepting → drain in-flight → flush access logs → close HBase.
 */

// node:cluster's CommonJS export is the Cluster object (its types describe the ES default export).
const cluster = /** @type {import('node:cluster').Cluster} */ (/** @type {unknown} */ (require('node:cluster')))
const os = require('node:os')
const crypto = require('node:crypto')
const { loadSettings, describeEndpoints } = require('./config')
const { createLogger } = require('./logging/logger')
const { killAfterMs } = require('./api/shutdown-budget')
const { servePrimary, workerLink } = require('./api/cluster-ipc')

const RESTART_WINDOW_MS = 60000
const MAX_RESTARTS_PER_WINDOW = 10

async function ensureEmbeddedHBase (settings, logger) {
  const infra = require('./infra/hbase')
  const hbaseSink = Object.values(settings.logSinks).find((s) => s.type === 'hbase')
  const options = infra.resolveOptions({
    configTable: settings.hbase.configTable,
    ...(hbaseSink ? { accessLogTable: hbaseSink.table } : {})
  })
  logger.info('no HBase address configured: starting the embedded local HBase (npm run hbase:up)')
  const info = await infra.up(options, { log: (line) => logger.info(line) })
  return info.bootstrap
}

async function runPrimary (settings, logger) {
  let bootstrap = settings.hbase.bootstrap
  if (bootstrap.length === 0) bootstrap = await ensureEmbeddedHBase(settings, logger)
  const count = settings.workers > 0 ? settings.workers : os.availableParallelism()
  const instance = crypto.randomBytes(3).toString('hex')
  let shuttingDown = false
  const restarts = []
  const tagOf = new WeakMap() // worker → its tag ("w1"); a replacement keeps the tag

  function fork (tag) {
    tagOf.set(cluster.fork({ BEACON_HBASE_BOOTSTRAP: bootstrap.join(','), BEACON_WORKER_TAG: tag, BEACON_INSTANCE: instance }), tag)
  }

  cluster.on('exit', (worker, code, signal) => {
    if (shuttingDown) return
    const now = Date.now()
    while (restarts.length && restarts[0] < now - RESTART_WINDOW_MS) restarts.shift()
    logger.error({ worker: tagOf.get(worker), pid: worker.process.pid, code, signal }, 'worker died; replacing it')
    if (restarts.length >= MAX_RESTARTS_PER_WINDOW) {
      logger.fatal(`workers died ${restarts.length} times within a minute; giving up`)
      shutdown('crash-loop', 1)
      return
    }
    restarts.push(now)
    fork(tagOf.get(worker))
  })

  let listening = 0
  cluster.on('listening', () => {
    if (++listening !== count) return
    const base = `http://localhost:${settings.port}`
    logger.info({ workers: count, port: settings.port, adminPort: settings.adminPort, hbase: bootstrap }, 'beacon ready')
    // A plain banner for the person who ran `npm start` (the JSON log above is for machines).
    const lines = describeEndpoints(settings).map((e) => `  ${base}${e.path}?id=1&callback=EXAMPLE.process   (${e.source}, cache ${e.cache}, log ${e.accessLog.join('+') || 'none'})`)
    process.stderr.write(`\nbeacon is ready (${count} workers, HBase at ${bootstrap.join(',')}). Try:\n${lines.join('\n')}\n  admin: http://localhost:${settings.adminPort}/healthz  /readyz  /metrics  /dashboard\n\n`)
  })

  async function shutdown (reason, exitCode = 0) {
    if (shuttingDown) return
    shuttingDown = true
    logger.info({ reason }, 'shutting down: draining workers')
    const workers = Object.values(cluster.workers)
    const exited = workers.map((w) => new Promise((resolve) => w.once('exit', resolve)))
    for (const w of workers) w.send({ cmd: 'shutdown' })
    // A worker keeps to settings.shutdownTimeoutMs by itself (api/shutdown-budget.js); this is
    // for one that hangs.
    const killTimer = setTimeout(() => {
      for (const w of Object.values(cluster.workers)) {
        logger.error({ worker: tagOf.get(w) }, 'worker did not stop in time; killing it')
        w.process.kill('SIGKILL')
      }
    }, killAfterMs(settings.shutdownTimeoutMs))
    await Promise.all(exited)
    clearTimeout(killTimer)
    logger.info('all workers stopped')
    logger.flush()
    process.exit(exitCode)
  }

  // Every worker serves the admin port; this gives it a host-wide view (metrics, admin changes).
  servePrimary(cluster)

  process.on('SIGTERM', () => shutdown('SIGTERM'))
  process.on('SIGINT', () => shutdown('SIGINT'))
  for (let i = 1; i <= count; i++) fork(`w${i}`)
}

async function runWorker (settings, logger) {
  const { createBeacon } = require('./api')
  const { createMetrics } = require('./api/metrics')
  const tag = process.env.BEACON_WORKER_TAG || `w${cluster.worker.id}`
  const metrics = createMetrics()
  const beacon = createBeacon(settings, {
    logger,
    metrics,
    cluster: workerLink(metrics.register),
    workerTag: tag,
    writerId: `${process.env.BEACON_INSTANCE || 'x'}${tag}p${process.pid}`
  })
  await beacon.listen()

  let stopping = false
  async function stop (reason) {
    if (stopping) return
    stopping = true
    const result = await beacon.close()
    logger.info({ worker: tag, reason, ...result }, 'worker stopped')
    logger.flush()
    process.exit(0)
  }
  process.on('message', (/** @type {any} */ msg) => { if (msg && msg.cmd === 'shutdown') stop('primary') })
  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGINT', () => stop('SIGINT'))
}

async function main () {
  let settings
  try {
    settings = loadSettings()
  } catch (err) {
    console.error(`beacon: ${err.message}`)
    process.exit(1)
  }
  const logger = createLogger({ level: settings.logLevel })
  try {
    if (cluster.isPrimary) await runPrimary(settings, logger)
    else await runWorker(settings, logger)
  } catch (err) {
    logger.fatal({ err }, 'beacon failed to start')
    logger.flush()
    process.exitCode = 1
    setTimeout(() => process.exit(1), 100).unref()
  }
}

main()
