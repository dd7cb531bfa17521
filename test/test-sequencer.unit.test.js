'use strict'

// The order of a jest run's files (test/support/test-sequencer.js): jest's own, the files that
// test/lanes.js names first and in its order, and hbase-cluster (which stops the shared cluster)
// after the other files unless the lane places it.

const TestSequencer = require('./support/test-sequencer')

const { ORDER_ENV } = TestSequencer
// No cache (config.cache false): jest's own order is then the largest file first.
const file = (name, size) => ({ path: `/repo/test/faults/${name}.test.js`, size, context: { config: { cache: false } } })
const sizes = new Map()
const files = () => [file('a', 10), file('hbase-cluster', 50), file('b', 30), file('c', 20)].map((f) => {
  sizes.set(f.path, f.size)
  return { path: f.path, context: { ...f.context, hasteFS: { getSize: (p) => sizes.get(p) } } }
})
const names = (tests) => tests.map((t) => t.path.replace(/^.*\/|\.test\.js$/g, ''))

function sorted (order) {
  const saved = process.env[ORDER_ENV]
  if (order === undefined) delete process.env[ORDER_ENV]
  else process.env[ORDER_ENV] = order
  try {
    return names(new TestSequencer({}).sort(files()))
  } finally {
    if (saved === undefined) delete process.env[ORDER_ENV]
    else process.env[ORDER_ENV] = saved
  }
}

test("jest's order (largest first without a cache), hbase-cluster last", () => {
  expect(sorted()).toEqual(['b', 'c', 'a', 'hbase-cluster'])
})

test('the files the lane names first, in its order; the rest in jest order after them', () => {
  expect(sorted('a,c')).toEqual(['a', 'c', 'b', 'hbase-cluster'])
  expect(sorted('hbase-cluster,a')).toEqual(['hbase-cluster', 'a', 'b', 'c'])
  expect(sorted('no-such-file,c')).toEqual(['c', 'b', 'a', 'hbase-cluster'])
})
