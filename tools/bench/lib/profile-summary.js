'use strict'

/**
 * Sums a V8 CPU profile (.cpuprofile, from `node --cpu-prof`) by what the code was doing, over
 * a time window, per request. Pure: tools/bench/profile.js feeds it profiles and the window.
 */

/**
 * The categories, in the order they are tried on a sample: the first whose test matches the
 * sampled frame or one of its callers wins, so a socket write inside beacon's request code counts
 * as the socket write.
 */
const CATEGORIES = {
  gc: 'V8\'s garbage collector on the main thread',
  'socket write': 'writev and the stream code that hands a response to the kernel',
  'HBase client': 'packages/hbase-client/ (encoding requests, decoding answers, protobufjs)',
  'access log': 'logging/ (the entry, its sinks, batches, journal)',
  metrics: 'api/metrics/index.js, api/metrics/hot.js, prom-client',
  cache: 'lib/toggles/ (config cache and store), lru-cache',
  'beacon request': 'the rest of api/ (routing, query parse, render, headers)',
  'node http': 'node\'s HTTP parser, server, socket reads and events',
  'V8 / native': '(program): the VM\'s own work not attributed to a JavaScript function',
  other: 'anything else (timers, microtask plumbing, modules)'
}

/** @type {Array<[string, (frame: { functionName: string, url: string }) => boolean]>} */
const STACK_TESTS = [
  [
    'socket write',
    (f) => ['writev', 'writevGeneric', 'writeGeneric', 'writeUtf8String', 'writeBuffer', 'writeLatin1String'].includes(f.functionName)
  ],
  ['HBase client', (f) => f.url.includes('/packages/hbase-client/') || f.url.includes('/protobufjs/')],
  ['access log', (f) => f.url.includes('/logging/')],
  ['metrics', (f) => f.url.endsWith('/api/metrics/index.js') || f.url.endsWith('/api/metrics/hot.js') || f.url.includes('/prom-client/')],
  ['cache', (f) => f.url.includes('/lib/toggles/') || f.url.includes('/lru-cache/')],
  ['beacon request', (f) => f.url.includes('/api/') || f.url.endsWith('baseline-server.js')],
  ['node http', (f) => /^node:(_http|http|net|events|internal\/(http|streams|stream_base|net))/.test(f.url)]
]

/**
 * @param {{ nodes: Array<{ id: number, callFrame: { functionName: string, url: string, lineNumber: number }, children?: number[] }>,
 *   samples: number[], timeDeltas: number[], startTime: number }} profile
 * @param {{ fromUs: number, toUs: number, requests: number, top?: number }} window monotonic µs
 *   (the profile's clock: CLOCK_MONOTONIC, as process.hrtime in any process on this host)
 * @returns {{ windowUs: number, samplesInWindow: number, busyUs: number, usPerRequest: number,
 *   categories: Record<string, number>, topSelf: Array<[string, number]> }}
 */
function summarizeProfile (profile, { fromUs, toUs, requests, top = 15 }) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map()
  for (const n of profile.nodes) for (const c of n.children || []) parent.set(c, n.id)
  const categoryOf = new Map() // node id → category (memoized per stack)
  const firstMatch = (id) => {
    for (const [name, test] of STACK_TESTS) {
      for (let cur = id; cur !== undefined; cur = parent.get(cur)) if (test(byId.get(cur).callFrame)) return name
    }
    return 'other'
  }
  const classify = (id) => {
    let found = categoryOf.get(id)
    if (found !== undefined) return found
    const leaf = byId.get(id).callFrame.functionName
    if (leaf === '(garbage collector)') found = 'gc'
    else if (leaf === '(program)') found = 'V8 / native'
    else if (leaf === '(idle)') found = 'idle'
    else found = firstMatch(id)
    categoryOf.set(id, found)
    return found
  }
  const totals = Object.fromEntries(Object.keys(CATEGORIES).map((name) => [name, 0]))
  const self = new Map()
  let t = profile.startTime
  let samplesInWindow = 0
  let busyUs = 0
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i]
    t += delta
    if (t < fromUs || t > toUs) continue
    samplesInWindow++
    const id = profile.samples[i]
    const category = classify(id)
    if (category === 'idle') continue
    // A sample stands for the time since the previous one.
    totals[category] += delta
    busyUs += delta
    const frame = byId.get(id).callFrame
    const file = frame.url.includes('/node_modules/')
      ? frame.url.slice(frame.url.lastIndexOf('/node_modules/') + 14)
      : frame.url.replace(/^.*\//, '')
    const key = `${frame.functionName || '(anonymous)'} ${file}:${frame.lineNumber + 1}`
    self.set(key, (self.get(key) || 0) + delta)
  }
  const perRequest = (us) => (requests > 0 ? Math.round((us / requests) * 100) / 100 : 0)
  return {
    windowUs: toUs - fromUs,
    samplesInWindow,
    busyUs,
    usPerRequest: perRequest(busyUs),
    categories: Object.fromEntries(Object.entries(totals).map(([name, us]) => [name, perRequest(us)])),
    topSelf: [...self].sort((a, b) => b[1] - a[1]).slice(0, top).map(([fn, us]) => [fn, perRequest(us)])
  }
}

module.exports = { summarizeProfile, CATEGORIES }
