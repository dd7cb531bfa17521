'use strict'

// The rollup marker (logging/rollup/marker.js) with a fake client: marks written at once, or
// riding with the log's next write (ride()), and how a write of the log carries them
// (hbase-sink/batcher.js putRecords). layout.js says why a mark must follow its rows.

const { createRollupMarker } = require('../../logging/rollup/marker')
const { putRecords } = require('../../logging/hbase-sink/batcher')
const { accessLogRowKey } = require('../../logging/access-log-layout')
const { MINUTE_MS } = require('../../logging/rollup/layout')

const MINUTE = 1764000000000 - (1764000000000 % MINUTE_MS)
const keyAt = (ms, n = 0) => accessLogRowKey(n % 16, ms, `w-${n}`)
const busy = () => Object.assign(new Error('busy'), { code: 'HBASE_REGION_BUSY', retryable: true })
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** A client whose multiPut records each call and answers with `answer(puts)` (default: all written). */
function fakeClient (answer = (puts) => puts.map(() => null)) {
  const calls = []
  return {
    calls,
    async multiPut (table, puts, opts) {
      calls.push({ table, puts, opts })
      return answer(puts, table)
    }
  }
}

function marker (client, rideMs) {
  return createRollupMarker({ client, rollupTable: 'rollup', logTable: 'log', writerId: 'w', rideMs })
}

describe('rollup marker', () => {
  test('without rideMs a mark is written at once, one put per minute, in a write that may coalesce', async () => {
    const client = fakeClient()
    const m = marker(client, 0)
    expect(await m.mark([keyAt(MINUTE + 1, 1), keyAt(MINUTE + 2, 2), keyAt(MINUTE + MINUTE_MS, 3)])).toBeNull()
    expect(client.calls).toHaveLength(1)
    const [{ table, puts, opts }] = client.calls
    expect(table).toBe('rollup')
    expect(opts).toMatchObject({ coalesce: true })
    expect(puts.map((p) => p.row)).toEqual([`m/log/${MINUTE}`, `m/log/${MINUTE + MINUTE_MS}`])
    expect(m.ride()).toBeNull() // nothing waits, and rides are off
    expect(m.stats()).toMatchObject({ marks: 2, marksRidden: 0, markPending: 0 })
  })

  test('with rideMs and a write queued, the minutes wait for it; landed counts them, nothing is written alone', async () => {
    const client = fakeClient()
    const m = marker(client, 50)
    expect(await m.mark([keyAt(MINUTE + 1)], undefined, true)).toBeNull()
    expect(m.stats().markPending).toBe(1)
    const ride = m.ride()
    expect(ride.puts).toEqual([{ table: 'rollup', row: `m/log/${MINUTE}`, cells: [{ family: 'r', qualifier: 'w.0', value: '' }] }])
    expect(m.ride()).toBeNull() // taken: the next write carries nothing
    ride.landed(null)
    ride.landed(busy()) // a second call is ignored
    await sleep(80)
    expect(client.calls).toHaveLength(0)
    expect(m.stats()).toMatchObject({ marks: 1, marksRidden: 1, markFailures: 0, markPending: 0 })
    m.close()
  })

  test('minutes no write took within rideMs are written on their own', async () => {
    const client = fakeClient()
    const m = marker(client, 20)
    m.mark([keyAt(MINUTE + 1)], 1234, true)
    await sleep(60)
    expect(client.calls).toHaveLength(1)
    expect(client.calls[0].opts).toMatchObject({ timeout: 1234 })
    expect(m.stats()).toMatchObject({ marks: 1, marksRidden: 0, markPending: 0 })
    m.close()
  })

  test('with no write queued (the last batch before a pause) the marks go at once, those waiting with them', async () => {
    const client = fakeClient()
    const m = marker(client, 10000)
    m.mark([keyAt(MINUTE + 1)], undefined, true)
    expect(client.calls).toHaveLength(0)
    expect(await m.mark([keyAt(MINUTE + MINUTE_MS + 1)], undefined, false)).toBeNull()
    expect(client.calls).toHaveLength(1)
    expect(client.calls[0].puts.map((p) => p.row)).toEqual([`m/log/${MINUTE}`, `m/log/${MINUTE + MINUTE_MS}`])
    expect(m.ride()).toBeNull()
    expect(m.stats()).toMatchObject({ marks: 2, marksRidden: 0, markPending: 0 })
    m.close()
  })

  test('a ride that fails puts its minutes back: they ride again or go alone, and end up written', async () => {
    const client = fakeClient()
    const m = marker(client, 1000)
    m.mark([keyAt(MINUTE + 1), keyAt(MINUTE + MINUTE_MS + 1)], undefined, true)
    const first = m.ride()
    first.landed(busy())
    expect(m.stats()).toMatchObject({ markFailures: 1, markPending: 2 })
    const second = m.ride()
    expect(second.puts.map((p) => p.row)).toEqual([`m/log/${MINUTE}`, `m/log/${MINUTE + MINUTE_MS}`])
    second.landed(null)
    expect(m.stats()).toMatchObject({ marks: 2, marksRidden: 2, markPending: 0 })
    // The retry timer the failure armed finds nothing left to write.
    await sleep(200)
    expect(client.calls).toHaveLength(0)
    m.close()
  })

  test('flush waits for the rides in flight and writes what they gave back; no ride is taken meanwhile', async () => {
    const client = fakeClient()
    const m = marker(client, 1000)
    m.mark([keyAt(MINUTE + 1)], undefined, true)
    const ride = m.ride()
    m.mark([keyAt(MINUTE + MINUTE_MS + 1)], undefined, true)
    let flushed = false
    const flush = m.flush(500).then((err) => { flushed = true; return err })
    await sleep(10)
    expect(flushed).toBe(false)
    expect(m.ride()).toBeNull() // flushing: the waiting minute goes in the flush's own write
    ride.landed(busy())
    expect(await flush).toBeNull()
    expect(client.calls).toHaveLength(1)
    expect(client.calls[0].puts.map((p) => p.row).sort()).toEqual([`m/log/${MINUTE}`, `m/log/${MINUTE + MINUTE_MS}`])
    expect(m.stats()).toMatchObject({ marks: 2, marksRidden: 0, markFailures: 1, markPending: 0 })
    m.close()
  })

  test('a reason that does not pass, riding, turns rollups off', async () => {
    const m = marker(fakeClient(), 1000)
    m.mark([keyAt(MINUTE + 1)], undefined, true)
    m.ride().landed(Object.assign(new Error('no table'), { code: 'HBASE_TABLE_NOT_FOUND', retryable: false }))
    expect(m.stats()).toMatchObject({ disabled: 'HBASE_TABLE_NOT_FOUND', markPending: 0 })
    m.mark([keyAt(MINUTE + 2)], undefined, true)
    expect(m.ride()).toBeNull()
    m.close()
  })
})

describe('a write of the log carries the waiting marks', () => {
  const opts = (client, rollupMarker) => /** @type {any} */ ({ client, table: 'log', writeTimeoutMs: 0, rollupMarker })
  const records = (n, at) => Array.from({ length: n }, (_, i) => ({ key: keyAt(at, i), value: `{"n":${i}}` }))

  test('one multiPut: the records, then the marks of rows written before; the marks of these rows wait for the next', async () => {
    const client = fakeClient()
    const m = marker(client, 1000)
    const ahead = () => true
    expect(await putRecords(opts(client, m), records(3, MINUTE + 1), ahead)).toEqual([null, null, null])
    expect(client.calls).toHaveLength(1)
    expect(client.calls[0].puts.every((p) => p.table === undefined)).toBe(true) // nothing was waiting
    expect(client.calls[0].opts).toMatchObject({ coalesce: true })
    expect(m.stats().markPending).toBe(1)

    expect(await putRecords(opts(client, m), records(2, MINUTE + MINUTE_MS + 1), ahead)).toEqual([null, null])
    const { table, puts } = client.calls[1]
    expect(table).toBe('log')
    expect(puts).toHaveLength(3)
    expect(puts.slice(0, 2).every((p) => p.table === undefined)).toBe(true)
    expect(puts[2]).toMatchObject({ table: 'rollup', row: `m/log/${MINUTE}` })
    expect(m.stats()).toMatchObject({ marks: 1, marksRidden: 1, markPending: 1 })
    m.close()
  })

  test('with no write queued the records\' marks are written at once, after their rows', async () => {
    const client = fakeClient()
    const m = marker(client, 1000)
    await putRecords(opts(client, m), records(2, MINUTE + 1), () => false)
    await putRecords(opts(client, m), records(1, MINUTE + 1))
    await sleep(10) // mark() does not wait for its write
    expect(client.calls.map((c) => c.table)).toEqual(['log', 'rollup', 'log', 'rollup'])
    expect(m.stats()).toMatchObject({ marks: 2, marksRidden: 0, markPending: 0 })
    m.close()
  })

  test('marks that fail do not fail the records; records that fail are not marked, the marks that rode still land', async () => {
    let failMarks = true
    const client = fakeClient((puts) => puts.map((p) => {
      if (p.table === 'rollup') return failMarks ? busy() : null
      return p.row.endsWith('-1') ? busy() : null
    }))
    const m = marker(client, 1000)
    m.mark([keyAt(MINUTE + 1)], undefined, true)
    const results = await putRecords(opts(client, m), records(2, MINUTE + 2 * MINUTE_MS), () => true)
    expect(results[0]).toBeNull()
    expect(results[1]).toMatchObject({ code: 'HBASE_REGION_BUSY' })
    expect(results).toHaveLength(2)
    // The failed mark waits again; the written record's minute waits too; the failed record's is not marked.
    expect(m.stats()).toMatchObject({ markFailures: 1, markPending: 2 })
    failMarks = false
    const carried = await putRecords(opts(client, m), [], () => true)
    expect(carried).toEqual([])
    expect(client.calls[1].puts.map((p) => p.row).sort()).toEqual([`m/log/${MINUTE}`, `m/log/${MINUTE + 2 * MINUTE_MS}`])
    expect(m.stats()).toMatchObject({ marks: 2, marksRidden: 2, markPending: 0 })
    m.close()
  })

  test('a write that throws hands its error to the ride: the marks wait again', async () => {
    const client = { multiPut: async () => { throw Object.assign(new Error('closed'), { code: 'HBASE_CLIENT_CLOSED', retryable: true }) } }
    const m = marker(client, 1000)
    m.mark([keyAt(MINUTE + 1)], undefined, true)
    const results = await putRecords(opts(client, m), records(1, MINUTE + 1), () => true)
    expect(results).toEqual([expect.objectContaining({ code: 'HBASE_CLIENT_CLOSED' })])
    expect(m.stats()).toMatchObject({ markFailures: 1, markPending: 1 })
    m.close()
  })
})
