'use strict'

const { countBuckets } = require('../../../logging/query/bucket-count')
const { COLUMN } = require('../../../logging/query/match')
const { bucketPrefix } = require('../../../logging/access-log-layout')

// The loop's own bookkeeping (ranges, concurrency, failure, abort) against a stand-in client;
// the counts read from a real HBase are tested in ../rollup.test.js and ./query.test.js.

const tick = () => new Promise((resolve) => setImmediate(resolve))

/**
 * A client whose bucket b holds `rowsOf(b)` rows (values: the group names given), answering
 * each row after a tick; it records every scan's options and how many ran at once.
 */
function fakeClient (rowsOf, { failBucket = -1 } = {}) {
  const log = { scans: [], open: 0, maxOpen: 0, ended: 0 }
  return {
    log,
    async * scan (table, opts) {
      log.scans.push({ table, ...opts })
      const bucket = parseInt(opts.startRow.slice(0, 2), 16)
      log.open++
      log.maxOpen = Math.max(log.maxOpen, log.open)
      try {
        for (const [i, value] of rowsOf(bucket).entries()) {
          await tick()
          if (bucket === failBucket && i === 1) throw new Error(`bucket ${bucket} failed`)
          yield {
            row: Buffer.from(`${opts.startRow}-${i}`),
            cells: [{ family: 'l', qualifier: 'e', value: Buffer.from(value), timestamp: 1 }]
          }
        }
      } finally {
        log.open--
        log.ended++
      }
    }
  }
}

const valueOf = (row) => row.cells[0].value.toString()

test('scans each bucket once over the range with the caller\'s options, and counts rows by the group the caller gives', async () => {
  const buckets = 6
  const rowsOf = (b) => Array.from({ length: b + 2 }, (_, i) => (i % 3 === 0 ? 'skip' : `g${i % 2}`))
  const client = fakeClient(rowsOf)
  const filter = { name: 'a filter' }
  const got = await countBuckets({ client, table: 't', buckets, caching: 7, timeout: 123, concurrency: 2 },
    { from: 1000, to: 61000, keysOnly: true, filter: /** @type {any} */ (filter) },
    (row) => (valueOf(row) === 'skip' ? null : valueOf(row)))

  const expected = new Map()
  let rows = 0
  for (let b = 0; b < buckets; b++) {
    for (const v of rowsOf(b)) {
      rows++
      if (v !== 'skip') expected.set(v, (expected.get(v) || 0) + 1)
    }
  }
  expect(got.scanned).toBe(rows)
  expect(got.total).toBe([...expected.values()].reduce((a, b) => a + b, 0))
  expect(got.groups).toEqual(expected)
  expect(got.truncated).toBe(false)
  expect(client.log.scans.map((s) => s.startRow).sort()).toEqual(
    Array.from({ length: buckets }, (_, b) => bucketPrefix(b) + '0000000001000')
  )
  for (const s of client.log.scans) {
    expect(s).toMatchObject({
      table: 't',
      stopRow: s.startRow.slice(0, 2) + '0000000061000',
      columns: [COLUMN],
      caching: 7,
      keysOnly: true,
      timeout: 123,
      filter
    })
  }
  expect(client.log.maxOpen).toBe(2)
})

test('past maxGroups distinct groups the rest count under "(other)", and the total stays exact', async () => {
  const client = fakeClient((b) => [`a${b}`, `a${b}`, `b${b}`])
  const got = await countBuckets({ client, table: 't', buckets: 4, caching: 10 }, { from: 0, to: 1 }, valueOf, { maxGroups: 3 })
  expect(got.total).toBe(12)
  expect(got.groups.size).toBe(4)
  expect(got.groups.get('(other)')).toBeGreaterThan(0)
  expect([...got.groups.values()].reduce((a, b) => a + b, 0)).toBe(12)
  expect(got.truncated).toBe(true)
})

test('a failing bucket rejects the count with its error, once every scan has ended, and no bucket is opened after it', async () => {
  const client = fakeClient(() => ['x', 'x', 'x'], { failBucket: 1 })
  const track = { opened: 0, closed: 0 }
  const source = {
    client,
    table: 't',
    buckets: 16,
    caching: 10,
    concurrency: 4,
    track: {
      opened: () => {
        track.opened++
      },
      closed: () => {
        track.closed++
      }
    }
  }
  await expect(countBuckets(source, { from: 0, to: 1 }, valueOf)).rejects.toThrow('bucket 1 failed')
  expect(client.log.open).toBe(0)
  expect(client.log.ended).toBe(client.log.scans.length)
  expect(client.log.scans.length).toBeLessThan(16)
  expect(track.opened).toBe(client.log.scans.length)
  expect(track.closed).toBe(track.opened)
})

test('aborting rejects with the reason and ends every scan', async () => {
  const client = fakeClient(() => Array.from({ length: 50 }, () => 'x'))
  const controller = new AbortController()
  let seen = 0
  const counting = countBuckets({ client, table: 't', buckets: 8, caching: 10 }, { from: 0, to: 1 }, (row) => {
    if (++seen === 5) controller.abort(new Error('stop'))
    return valueOf(row)
  }, { signal: controller.signal })
  await expect(counting).rejects.toThrow('stop')
  expect(client.log.open).toBe(0)
  expect(seen).toBeLessThan(8 * 50)
})
