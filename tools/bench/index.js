'use strict'

// The bench's entry for the tests that drive real processes and HBase with its parts: child
// processes (a server, a job) and their CPU from /proc, the RegionServer chaos engine and its
// report, and an HFile's bytes on disk. Nothing else outside tools/bench reaches into it.

const { startNode, waitForHttp } = require('./lib/processes')
const { readAll, withDescendants } = require('./lib/proc-sampler')
const { runChaos } = require('./lib/chaos')
const { chaosMarkdown } = require('./lib/chaos/report')
const { KINDS: CHAOS_KINDS } = require('./lib/chaos/plan')
const { hfileBytes } = require('./lib/hfile-bytes')

/** @typedef {import('./lib/chaos').StartLoad} StartLoad what the chaos run starts its load with */

module.exports = { startNode, waitForHttp, readAll, withDescendants, runChaos, chaosMarkdown, CHAOS_KINDS, hfileBytes }
