'use strict'

// The books of a running beacon's two access-log sinks, watched from the test process (the
// sinks of test/support/beacon.js's in-process app), and the scrapes that tell their story.

const { request } = require('./beacon')

/**
 * @param {Array<{ ms: number }>} list answers with their times
 * @returns {number} the 99th percentile of their times, ms
 */
function p99 (list) {
  const ms = list.map((a) => a.ms).sort((a, b) => a - b)
  return ms[Math.floor(ms.length * 0.99)] || 0
}

const hbaseBalanced = (s) => s.accepted + s.claimed ===
  s.written + s.pending + s.journalBuffered + s.journalPending + s.shed + s.corrupt + s.lostInMemory
const fileBalanced = (s) => s.accepted === s.written + s.pending + s.shed

/**
 * Samples both sinks every 50 ms: whether their books balance and their memory stays in its
 * bounds at every sample, the highest figures seen, and (once `recovery` is set to a start
 * time) when each sink was first back to normal: the HBase sink's journal empty, the file sink
 * writing again with less than a second's lines waiting.
 */
function watchSinks (app) {
  const hs = app.sinks.get('hbase')
  const fsink = app.sinks.get('file')
  const w = { samples: 0, unbalanced: [], maxHeld: 0, maxFilePending: 0, recovery: 0, hbaseDrainedAt: 0, fileDrainedAt: 0 }
  const timer = setInterval(() => {
    const h = hs.stats()
    const f = fsink.stats()
    w.samples++
    if (!hbaseBalanced(h)) w.unbalanced.push({ hbase: h })
    if (!fileBalanced(f)) w.unbalanced.push({ file: f })
    w.maxHeld = Math.max(w.maxHeld, h.pending + h.journalBuffered)
    w.maxFilePending = Math.max(w.maxFilePending, f.pending)
    if (!w.recovery) return
    const now = Date.now()
    if (!w.hbaseDrainedAt && h.state === 'up' && h.journalBuffered + h.journalPending === 0) w.hbaseDrainedAt = now
    if (!w.fileDrainedAt && f.writeFailing === null && f.pending < 1000) w.fileDrainedAt = now
  }, 50)
  return { w, stop: () => clearInterval(timer) }
}

/**
 * One scrape of the app's /metrics.
 * @param {{ adminUrl: string }} app
 * @returns {Promise<(series: string) => number>} a series' value (NaN when absent)
 */
async function scrape (app) {
  const text = (await request(`${app.adminUrl}/metrics`)).body
  return (series) => {
    const line = text.split('\n').find((l) => l.startsWith(series + ' '))
    return line === undefined ? NaN : Number(line.slice(series.length + 1))
  }
}

/**
 * @param {{ adminUrl: string }} app
 * @returns {Promise<{ status: number, checks: Record<string, string> }>}
 */
async function readyz (app) {
  const res = await request(`${app.adminUrl}/readyz`)
  return { status: res.status, checks: JSON.parse(res.body).checks }
}

module.exports = { watchSinks, scrape, readyz, p99 }
