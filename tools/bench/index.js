'use strict'

// The bench's entry for the tests that drive real processes and HBase with its parts: child
// processes (a server, a job) and their CPU from /proc, and an HFile's bytes on disk. Nothing
// else outside tools/bench reaches into it. The chaos engine has its own entry (tools/chaos).
// The HBase client's own bench (packages/hbase-client/bench) reads the machine's description and
// samples threads' CPU with the same parts.

const { startNode, waitForHttp } = require('./lib/processes')
const { readAll, withDescendants, createSampler, readThreads } = require('./lib/proc-sampler')
const { describeMachine, timestampForFile, percentile } = require('./lib/machine')
const { hfileBytes } = require('./lib/hfile-bytes')

module.exports = {
  startNode,
  waitForHttp,
  readAll,
  withDescendants,
  hfileBytes,
  createSampler,
  readThreads,
  describeMachine,
  timestampForFile,
  percentile
}
