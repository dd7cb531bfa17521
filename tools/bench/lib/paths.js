'use strict'

/**
 * Request paths for the load generators, built from a plain (JSON) spec so that a load worker in
 * another process or network namespace can rebuild the same picker from its job.
 */

const DEFAULT_CALLBACK = 'EXAMPLE.process'

/** The header of an OFREP evaluation's JSON body (docs/openfeature.md#requests). */
const OFREP_HEADERS = Object.freeze({ 'Content-Type': 'application/json' })

/**
 * @typedef {{ endpoint: string, kind?: 'random'|'sweep', view?: 'jsonp'|'ofrep', callback?: string,
 *   idRange?: number, missRatio?: number, passes?: number }} PathSpec
 *   random: ids from 1..idRange, absent ids at missRatio (the seed protocol);
 *   sweep: every id of 1..idRange in order, each `passes` times in a row (cache warm-up);
 *   view: `jsonp` (the default) GETs the endpoint's script for the id; `ofrep` POSTs the OFREP
 *   bulk evaluation of the same id (`{"context":{"targetingKey":id}}`, all its flags)
 * @typedef {{ path: string, method?: string, headers?: Record<string, string>, body?: string }} PlannedRequest
 */

/**
 * @param {PathSpec} spec
 * @param {() => number} [random] injectable for tests
 * @returns {() => PlannedRequest}
 */
function createPathPicker (spec, random = Math.random) {
  const { endpoint, kind = 'random', view = 'jsonp', callback = DEFAULT_CALLBACK, idRange = 10000 } = spec
  if (!/^[A-Za-z0-9_-]+$/.test(endpoint || '')) throw new TypeError(`paths: bad endpoint ${JSON.stringify(endpoint)}`)
  if (view !== 'jsonp' && view !== 'ofrep') throw new TypeError(`paths: unknown view ${JSON.stringify(view)}`)
  const ofrepPath = `/api/${endpoint}/ofrep/v1/evaluate/flags`
  /** @type {(id: string) => PlannedRequest} */
  const requestFor = view === 'ofrep'
    ? (id) => ({ path: ofrepPath, method: 'POST', headers: OFREP_HEADERS, body: JSON.stringify({ context: { targetingKey: id } }) })
    : (id) => ({ path: `/api/${endpoint}.js?id=${id}&callback=${callback}` })
  if (kind === 'random') {
    const missRatio = spec.missRatio || 0
    const absentId = () => `absent${Math.floor(random() * 1e9)}`
    return () => requestFor(random() < missRatio ? absentId() : String(1 + Math.floor(random() * idRange)))
  }
  if (kind === 'sweep') {
    // Each id several times in a row so that every worker's cache sees it, whichever
    // connection (and so worker) carries it.
    const passes = spec.passes || 1
    let k = 0
    return () => requestFor(String(1 + (Math.floor(k++ / passes) % idRange)))
  }
  throw new TypeError(`paths: unknown kind ${JSON.stringify(kind)}`)
}

module.exports = { createPathPicker, OFREP_HEADERS }
