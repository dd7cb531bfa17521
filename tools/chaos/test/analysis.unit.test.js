'use strict'

const { parseRegionName, isSettled, recoveries, transitionWindows, regionOffline } = require('../timeline')
const { matchAccessLog, failuresPerAction, checkSample2, analyzeChaos } = require('../analysis')

const LOG = 'beacon_access_log'
const CFG = 'beacon_config'
const region = (table, start, enc) => `${table},${start},1790000000000.${enc.padEnd(32, '0')}.`
const C1 = region(CFG, '', 'a1')
const C4 = region(CFG, '4', 'a4')
const C7 = region(CFG, '7', 'a7')
const L0 = region(LOG, '', 'b0')
const L8 = region(LOG, '08', 'b8')
const RS = ['127.0.0.1:16420', '127.0.0.1:16421', '127.0.0.1:16422']

/** A look where server i holds lists[i] (null: unreachable). */
function look (at, lists, extra = {}) {
  return {
    at,
    ms: 20,
    active: '127.0.0.1:16400',
    backups: ['127.0.0.1:16401'],
    dead: [],
    rit: 0,
    ritRegions: [],
    servers: lists.map((regions, i) =>
      regions === null
        ? { server: RS[i], startCode: 1, unreachable: 'Connection refused' }
        : { server: RS[i], startCode: 1, regions }
    ),
    ...extra
  }
}
const healthy = (at) => look(at, [[C1, L0], [C4, L8], [C7]])

test('region names: table, start key and encoded name; meta too', () => {
  expect(parseRegionName(C4)).toEqual({ table: CFG, startKey: '4', encoded: 'a4'.padEnd(32, '0') })
  expect(parseRegionName('hbase:meta,,1.1588230740')).toEqual({ table: 'hbase:meta', startKey: '', encoded: '1588230740' })
})

test('settled: master answers, nothing in transition, every server answers, each region once', () => {
  const expected = { [CFG]: 3, [LOG]: 2 }
  expect(isSettled(healthy(0), expected)).toBe(true)
  expect(isSettled(healthy(0), { ...expected, [LOG]: 3 })).toBe(false)
  expect(isSettled(look(0, [[C1, L0], null, [C7]]), expected)).toBe(false)
  expect(isSettled(look(0, [[C1, L0, C4], [L8], [C7]], { rit: 1 }), expected)).toBe(false)
  expect(isSettled(look(0, [[C1, L0, C4], [C4, L8], [C7]]), expected)).toBe(false)
  expect(isSettled({ at: 0, ms: 3000, error: 'no master' }, expected)).toBe(false)
})

test('a killed RegionServer recovers when it has left the live list and its regions are back', () => {
  const kill = { n: 1, kind: 'kill-rs', target: RS[1], at: 1000, doneAt: 1000, error: null, detail: { startCode: 1 }, steps: [] }
  const looks = [
    healthy(500),
    look(1500, [[C1, L0], null, [C7]]), // dead, not declared yet
    {
      ...look(11000, [[C1, L0], [C7]]),
      servers: [
        { server: RS[0], startCode: 1, regions: [C1, L0] },
        { server: RS[2], startCode: 1, regions: [C7] }
      ],
      rit: 2
    },
    {
      ...look(13000, []),
      servers: [
        { server: RS[0], startCode: 1, regions: [C1, L0, L8] },
        { server: RS[2], startCode: 1, regions: [C7, C4] }
      ]
    }
  ]
  expect(recoveries([kill], looks, { logTable: LOG })).toEqual([{ n: 1, reassignedAt: 13000, reassignedMs: 12000 }])
  const windows = transitionWindows([kill], looks, { logTable: LOG, graceMs: 7000 })
  expect(windows).toContainEqual({ from: 1000, to: 20000, cause: '#1 kill-rs' })
  expect(windows).toContainEqual({ from: 500, to: 20000, cause: 'unsettled (seen by the watcher)' })

  // Row 5 lives in the region starting at '4': offline from the kill until it reopened.
  const offline = regionOffline(looks, CFG)
  expect(offline('5', 1400, 1600)).toBe(true)
  expect(offline('5', 12500, 13500)).toBe(false)
  expect(offline('2', 1400, 1600)).toBe(false) // its region never moved
  // A split makes the access log expect one region more once the split has returned.
  const split = { n: 2, kind: 'split-region', target: L0, at: 14000, doneAt: 15000, error: null, detail: {}, steps: [] }
  const after = [
    ...looks,
    {
      ...looks[3],
      at: 16000,
      servers: [{ server: RS[0], startCode: 1, regions: [C1, L0, L8, region(LOG, '04', 'b4')] }, looks[3].servers[1]]
    }
  ]
  expect(recoveries([kill, split], after, { logTable: LOG })[1]).toEqual({ n: 2, reassignedAt: 16000, reassignedMs: 2000 })
})

test('a master kill recovers when another master is active; a move when it returned', () => {
  const looks = [healthy(0), { at: 2000, ms: 3000, error: 'no master' }, { ...healthy(12000), active: '127.0.0.1:16401', backups: [] }]
  const kill = { n: 1, kind: 'kill-master', target: '127.0.0.1:16400', at: 1000, doneAt: 1000, error: null, detail: {}, steps: [] }
  const move = { n: 2, kind: 'move-region', target: C4, at: 1000, doneAt: 11000, error: null, detail: {}, steps: [] }
  expect(recoveries([kill, move], looks, { logTable: LOG }).map((r) => r.reassignedMs)).toEqual([11000, 11000])
  const never = { ...kill, at: 13000 }
  expect(recoveries([never], looks, { logTable: LOG })[0].reassignedAt).toBeNull()
})

test('failures are counted from an action to the next one', () => {
  const actions = [{ at: 1000 }, { at: 5000 }].map((a, i) => ({
    n: i + 1,
    kind: 'move-region',
    target: null,
    doneAt: null,
    error: null,
    detail: {},
    steps: [],
    ...a
  }))
  const rec = (endpoint, done, status) => ({ endpoint, id: '1', sent: done - 10, done, status })
  const { before, perAction } = failuresPerAction(actions, [
    rec('sample2', 500, 503),
    rec('sample2', 1500, 503),
    rec('sample2', 2500, 200),
    rec('sample5', 3000, 0),
    rec('sample2', 6000, 503)
  ])
  expect(before).toBe(1)
  expect(perAction[0]).toEqual({ count: 2, byEndpoint: { sample2: 1, sample5: 1 }, firstMs: 500, lastMs: 2000 })
  expect(perAction[1]).toEqual({ count: 1, byEndpoint: { sample2: 1 }, firstMs: 1000, lastMs: 1000 })
})

test('sample2 failures: 503 only, within the deadline, inside a window; own region or another one', () => {
  const windows = [{ from: 1000, to: 9000, cause: '#1' }]
  const offline = (row) => row === '5'
  const r = (id, sent, ms, status) => ({ endpoint: 'sample2', id, sent, done: sent + ms, status })
  const answers = [
    r('5', 2000, 3000, 503),
    r('2', 2000, 10, 503),
    r('5', 9500, 10, 503),
    r('2', 3000, 8000, 503),
    r('2', 3000, 5, 500),
    r('1', 3000, 5, 200)
  ]
  const out = checkSample2(answers, windows, offline, { deadlineMs: 7000, lookSlackMs: 1000 })
  expect(out.failures).toBe(5)
  expect(out.served503).toBe(4)
  expect(out.notServiceUnavailable.map((x) => x.status)).toEqual([500])
  expect(out.overDeadline.map((x) => x.ms)).toEqual([8000])
  expect(out.outsideWindows.map((x) => x.sent)).toEqual([9500])
  expect(out.ownRegionOffline).toBe(2)
  expect(out.otherRegionOnly).toBe(3)
  expect(out.maxMs).toBe(8000)
})

test('access-log rows are matched one to one with the 2xx answers by their mark', () => {
  const row = (ua, key = ua) =>
    `${key}\t${JSON.stringify({ ts: 1, endpoint: 'sample5', id: '1', status: 200, ms: 1, ip: null, ua, ref: null })}`
  const records = ['p/0', 'p/1', 'p/2', 'p/3'].map((mark, i) => ({
    endpoint: 'sample5',
    id: '1',
    mark,
    sent: 0,
    done: 1,
    status: i === 3 ? 0 : 200
  }))
  const lines = [row('p/0'), row('p/1'), row('p/1', 'other-key'), row('p/3'), row('someone else'), 'garbage', '']
  expect(matchAccessLog(records, lines, 'p/')).toEqual({
    ok: 3, rowsFound: 4, duplicates: 1, missing: 1, extra: 1, otherRows: 2, missingMarks: ['p/2'], duplicateMarks: ['p/1']
  })
})

test('the whole verdict of a quiet run: nothing failed, every row found', () => {
  const records = [
    { endpoint: 'sample5', id: '1', mark: 'm/0', sent: 100, done: 102, status: 200 },
    { endpoint: 'sample3', id: '1', sent: 100, done: 101, status: 200 },
    { endpoint: 'sample2', id: '1', sent: 100, done: 103, status: 200 }
  ]
  const v = analyzeChaos({
    actions: [],
    looks: [healthy(0), healthy(500)],
    records,
    dumpLines: [`k\t${JSON.stringify({ ua: 'm/0' })}`],
    markPrefix: 'm/',
    deadlineMs: 7000,
    logTable: LOG,
    configTable: CFG,
    lookIntervalMs: 500
  })
  expect(v.answers.sample5).toEqual({ requests: 1, ok: 1, statuses: { 200: 1 }, errors: 0, maxMs: 2 })
  expect(v.cachedFailures).toEqual([])
  expect(v.accessLog).toMatchObject({ ok: 1, rowsFound: 1, duplicates: 0, missing: 0, extra: 0, otherRows: 0 })
  expect(v.sample2.failures).toBe(0)
  expect(v.windows).toEqual([])
})
