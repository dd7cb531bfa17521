'use strict'

/**
 * Entry point: `npm start`. The primary validates settings, brings up the embedded local HBase
 * when no HBase address is configured, forks one worker per core and, when a sink keeps rollups,
 * one rollup process, and supervises them; workers serve the data plane (PORT) and the admin
 * plane (ADMIN_PORT), the rollup process counts the rollups (api/rollup-job.js), in a heap of
 * its own capped by settings.rollupJob.maxOldSpaceMiB. SIGTERM/SIGINT shut down
 * gracefully: stop accepting → drain in-flight → flush access logs and replay every journal file
 * of the state dir into HBase → close HBase.
 *
 * Exit status: 0 stopped with nothing left behind; 75 (EX_TEMPFAIL) stopped, but access-log
 * entries HBase could not take within the shutdown budget are left in journal files of the state
 * dir (the log names them; a restart on this state dir or `beacon journal replay` sends them);
 * 76 stopped, and access-log entries held in memory only were lost (a disk that refused every
 * write at the stop, or a worker killed for hanging while a sink kept entries in memory only: the
 * log says how many, when it can know); 1 failed to start, or workers crash-looped.
 */

// node:cluster's CommonJS export is the Cluster object (its types describe the ES default export).
const cluster = /** @type {import('node:cluster').Cluster} */ (/** @type {unknown} */ (require('node:cluster')))
const os = require('node:os')
const crypto = require('node:crypto')
const { loadSettings, describeEndpoints } = require('./config')
const { createLogger } = require('./logging/logger')
const { killAfterMs } = require('./api/shutdown-budget')
const { servePrimary, workerLink } = require('./api/cluster-ipc')
const { serverAdminToken } = require('./config/admin-token')
const { cliEnvFor } = require('./config/cli-env')
const { keepsRollups } = require('./api/rollup-job')
const { startEmbeddedHBase } = require('./config/embedded-hbase')
const { makeStatePrivate } = require('./config/state-dir')

const EXIT_LEFT_ON_DISK = 75
const EXIT_LOST_IN_MEMORY = 76
const RESTART_WINDOW_MS = 60000
const MAX_RESTARTS_PER_WINDOW = 10
// What the rollup process is told apart by (its environment): a cluster worker of another kind.
const ROLE_ENV = 'BEACON_ROLE'
const ROLLUP_ROLE = 'rollup'
const ROLLUP_TAG = 'rollup'

async function ensureEmbeddedHBase (settings, logger) {
  logger.info('no HBase address configured: starting the embedded local HBase (npm run hbase:up)')
  return startEmbeddedHBase(settings, (line) => logger.info(line))
}

/**
 * @param {any} settings
 * @param {import('pino').Logger} logger
 * @param {ReturnType<typeof serverAdminToken>} admin the admin API's token, handed to the workers
 */
async function runPrimary (settings, logger, admin) {
  let bootstrap = settings.hbase.bootstrap
  if (bootstrap.length === 0) bootstrap = await ensureEmbeddedHBase(settings, logger)
  const count = settings.workers > 0 ? settings.workers : os.availableParallelism()
  // Before the first fork: node reads it there.
  cluster.schedulingPolicy = settings.acceptConnections === 'workers' ? cluster.SCHED_NONE : cluster.SCHED_RR
  const instance = crypto.randomBytes(3).toString('hex')
  let shuttingDown = false
  const restarts = []
  const tagOf = new WeakMap() // worker → its tag ("w1", "rollup"); a replacement keeps the tag
  const rollupRestarts = []
  let rollupTimer = null

  function fork (tag) {
    const env = {
      BEACON_HBASE_BOOTSTRAP: bootstrap.join(','),
      BEACON_WORKER_TAG: tag,
      BEACON_INSTANCE: instance,
      // Named tokens only: the workers read BEACON_ADMIN_TOKENS from the environment themselves.
      ...(admin.token === null ? {} : { BEACON_ADMIN_TOKEN: admin.token })
    }
    // V8 flags of the fork's own (after the primary's: the last one wins). setupPrimary only
    // sets what the next forks run with: set for this one, then back.
    const execArgv = process.execArgv
    const rollup = tag === ROLLUP_TAG
    const own = rollup
      ? [`--max-old-space-size=${settings.rollupJob.maxOldSpaceMiB}`] // the rollup process's heap cap
      : settings.workerSemiSpaceMiB > 0 ? [`--max-semi-space-size=${settings.workerSemiSpaceMiB}`] : []
    cluster.setupPrimary({ execArgv: [...execArgv, ...own] })
    try {
      // The rollup process: the same entry point, told its role.
      tagOf.set(cluster.fork(rollup ? { ...env, [ROLE_ENV]: ROLLUP_ROLE } : env), tag)
    } finally {
      cluster.setupPrimary({ execArgv })
    }
  }

  /**
   * The rollup process died: replaced at once, as a worker is, but its dying over and over (a
   * minute too big for its heap) never stops the server: past MAX_RESTARTS_PER_WINDOW a minute,
   * it is replaced a minute later (its minutes stay marked meanwhile; nothing is lost).
   */
  function replaceRollup (worker, code, signal) {
    const now = Date.now()
    while (rollupRestarts.length && rollupRestarts[0] < now - RESTART_WINDOW_MS) rollupRestarts.shift()
    rollupRestarts.push(now)
    const wait = rollupRestarts.length > MAX_RESTARTS_PER_WINDOW ? RESTART_WINDOW_MS : 0
    logger.error({ worker: ROLLUP_TAG, pid: worker.process.pid, code, signal, restartInMs: wait },
      'rollup process died; replacing it')
    rollupTimer = setTimeout(() => {
      rollupTimer = null
      if (!shuttingDown) fork(ROLLUP_TAG)
    }, wait)
  }

  cluster.on('exit', (worker, code, signal) => {
    if (shuttingDown) return
    if (tagOf.get(worker) === ROLLUP_TAG) return replaceRollup(worker, code, signal)
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

  // Ready once every worker listens on both ports (each port is one 'listening' event).
  const listened = new Map() // worker tag → ports it listens on
  let announced = false
  cluster.on('listening', (worker, address) => {
    const tag = tagOf.get(worker)
    if (!listened.has(tag)) listened.set(tag, new Set())
    listened.get(tag).add(address.port)
    if (announced || listened.size < count || [...listened.values()].some((ports) => ports.size < 2)) return
    announced = true
    const base = `http://localhost:${settings.port}`
    const rollups = keepsRollups(settings)
    logger.info({
      workers: count,
      rollupProcess: rollups,
      port: settings.port,
      adminPort: settings.adminPort,
      hbase: bootstrap
    }, 'beacon ready')
    // A plain banner for the person who ran `npm start` (the JSON log above is for machines).
    const lines = describeEndpoints(settings).map((e) => {
      const accessLog = e.accessLog.join('+') || 'none'
      return `  ${base}${e.path}?id=1&callback=EXAMPLE.process   (${e.source}, cache ${e.cache}, log ${accessLog})`
    })
    // OpenFeature (docs/openfeature.md): the bulk evaluation on the first endpoint that serves it
    // without an API key.
    const keyless = (name) => settings.endpoints[name].ofrep && !settings.endpoints[name].ofrep.apiKeys
    const ofrep = Object.keys(settings.endpoints).find(keyless)
    if (ofrep) {
      const body = '{"context":{"targetingKey":"1"}}'
      lines.push(`  curl -H 'Content-Type: application/json' -d '${body}' ${base}/api/${ofrep}/ofrep/v1/evaluate/flags`)
    }
    const adminUrl = `http://localhost:${settings.adminPort}`
    const tokenLine = admin.source === 'state'
      ? `  admin token: ${admin.file} (${admin.created ? 'created' : 'kept'}, ` +
        'mode 0600; the CLI on this machine reads it)\n'
      : ''
    const cli = cliEnvFor(settings)
    const processes = `${count} worker${count === 1 ? '' : 's'}${rollups ? ' and a rollup process' : ''}`
    process.stderr.write(`\nbeacon is ready (${processes}, HBase at ${bootstrap.join(',')}). Try:\n` +
      `${lines.join('\n')}\n` +
      `  admin: ${adminUrl}/healthz  /readyz  /metrics  /dashboard\n${tokenLine}` +
      `  CLI:   ${cli}npx beacon status; ${cli}npx beacon log count --from -10m --id 1\n\n`)
  })

  async function shutdown (reason, exitCode = 0) {
    if (shuttingDown) return
    shuttingDown = true
    if (rollupTimer) clearTimeout(rollupTimer)
    logger.info({ reason }, 'shutting down: draining workers')
    const workers = Object.values(cluster.workers)
    /** @type {Promise<number|null>[]} */
    const exited = workers.map((w) => new Promise((resolve) => w.once('exit', (code) => resolve(code))))
    for (const w of workers) w.send({ cmd: 'shutdown' })
    let killed = 0
    // A worker keeps to settings.shutdownTimeoutMs by itself (api/shutdown-budget.js), the rollup
    // process ends its HBase calls at once (api/rollup-job.js); this is for one that hangs.
    const killTimer = setTimeout(() => {
      for (const w of Object.values(cluster.workers)) {
        logger.error({ worker: tagOf.get(w) }, 'worker did not stop in time; killing it')
        w.process.kill('SIGKILL')
        if (tagOf.get(w) !== ROLLUP_TAG) killed++
      }
    }, killAfterMs(settings.shutdownTimeoutMs))
    const codes = await Promise.all(exited)
    clearTimeout(killTimer)
    // A killed worker's write-ahead logs are files, counted below; what a memory-only sink held is not.
    const volatile = Object.values(settings.logSinks).some((s) => s.durability === 'memory')
    if (codes.includes(EXIT_LOST_IN_MEMORY) || (killed > 0 && volatile)) {
      logger.error({ killed, volatileSinks: volatile },
        'access-log entries held in memory only were lost at this stop (the workers\' logs say how many, when they could count)')
      exitCode = exitCode || EXIT_LOST_IN_MEMORY
    }
    const left = await journalLeftovers(settings)
    if (left.damaged.length) {
      logger.warn({ files: left.damaged },
        'damaged journal files are kept in the state dir for the operator (their whole records were replayed)')
    }
    if (left.entries > 0) {
      logger.error({ entries: left.entries, files: left.files },
        'all workers stopped; access-log entries are left in journal files: ' +
        'replay them with a restart on this state dir or `beacon journal replay`')
      if (exitCode === 0) exitCode = EXIT_LEFT_ON_DISK
    } else {
      logger.info('all workers stopped')
    }
    logger.flush()
    process.exit(exitCode)
  }

  // Every worker serves the admin port; this gives it a host-wide view (metrics, admin changes).
  servePrimary(cluster, {
    onSendError: (err, worker) => logger.warn(
      { worker: tagOf.get(worker), pid: worker.process.pid, error: err.message },
      'could not message a worker (it is exiting)')
  })

  process.on('SIGTERM', () => shutdown('SIGTERM'))
  process.on('SIGINT', () => shutdown('SIGINT'))
  for (let i = 1; i <= count; i++) fork(`w${i}`)
  if (keepsRollups(settings)) fork(ROLLUP_TAG)
}

/**
 * Journal and write-ahead-log files left in the HBase sinks' journal directories, any writer's,
 * and the damaged files quarantined there.
 * @param {any} settings
 * @returns {Promise<{ entries: number, files: Array<{ file: string, entries: number }>, damaged: string[] }>}
 */
async function journalLeftovers (settings) {
  const { leftOnDisk } = require('./logging/hbase-sink/left-on-disk')
  const { quarantinedFiles } = require('./logging/hbase-sink/journal/files')
  const dirs = Object.values(settings.logSinks).filter((s) => s.type === 'hbase').map((s) => s.journalDir)
  const found = await Promise.all(dirs.map((dir) => leftOnDisk(dir, 'j-')))
  return {
    entries: found.reduce((n, f) => n + f.entries, 0),
    files: found.flatMap((f) => f.files),
    damaged: dirs.flatMap((dir) => quarantinedFiles(dir))
  }
}

async function runWorker (settings, logger) {
  const { createBeacon } = require('./api')
  const { createMetrics } = require('./api/metrics')
  const tag = process.env.BEACON_WORKER_TAG || `w${cluster.worker.id}`
  const metrics = createMetrics({ processTag: tag })
  const beacon = createBeacon(settings, {
    logger,
    metrics,
    cluster: workerLink(metrics.register),
    workerTag: tag,
    writerId: `${process.env.BEACON_INSTANCE || 'x'}${tag}p${process.pid}`
  })
  // The stop handlers are in place before anything is awaited: a stop that comes while this
  // worker starts (a replacement claiming a dead worker's files) waits for the start, then closes.
  const listening = beacon.listen()
  let stopping = false
  async function stop (reason) {
    if (stopping) return
    stopping = true
    await listening.catch(() => {})
    const result = await beacon.close()
    logger.info({ worker: tag, reason, ...result }, 'worker stopped')
    logger.flush()
    process.exit(result.lostInMemory > 0 ? EXIT_LOST_IN_MEMORY : result.leftOnDisk > 0 ? EXIT_LEFT_ON_DISK : 0)
  }
  process.on('message', (/** @type {any} */ msg) => { if (msg && msg.cmd === 'shutdown') stop('primary') })
  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGINT', () => stop('SIGINT'))
  await listening
}

/**
 * The rollup process (forked by the primary with BEACON_ROLE=rollup): the rollup job of the
 * settings' sinks (api/rollup-job.js), its metrics served to the primary's /metrics as a
 * worker's are (api/cluster-ipc.js), stopped as a worker is.
 */
async function runRollupProcess (settings, logger) {
  const { createRollupJob } = require('./api')
  const { createMetrics } = require('./api/metrics')
  const metrics = createMetrics({ processTag: ROLLUP_TAG })
  workerLink(metrics.register)
  const job = createRollupJob(settings, { logger: logger.child({ worker: ROLLUP_TAG }), metrics })
  job.start()
  let stopping = false
  async function stop (reason) {
    if (stopping) return
    stopping = true
    await job.close()
    logger.info({ worker: ROLLUP_TAG, reason }, 'rollup process stopped')
    logger.flush()
    process.exit(0)
  }
  process.on('message', (/** @type {any} */ msg) => { if (msg && msg.cmd === 'shutdown') stop('primary') })
  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGINT', () => stop('SIGINT'))
}

async function main () {
  let settings
  let admin
  try {
    settings = loadSettings()
    // Before anything is written there: the workers and the embedded HBase inherit the umask.
    if (cluster.isPrimary) makeStatePrivate(settings.stateDir)
    if (cluster.isPrimary) admin = serverAdminToken(settings)
  } catch (err) {
    console.error(`beacon: ${err.message}`)
    process.exit(1)
  }
  const logger = createLogger({ level: settings.logLevel })
  try {
    if (cluster.isPrimary) await runPrimary(settings, logger, admin)
    else if (process.env[ROLE_ENV] === ROLLUP_ROLE) await runRollupProcess(settings, logger)
    else await runWorker(settings, logger)
  } catch (err) {
    logger.fatal({ err }, 'beacon failed to start')
    logger.flush()
    process.exitCode = 1
    setTimeout(() => process.exit(1), 100).unref()
  }
}

main()
