'use strict'

// The HBase sink's one owner of up/down: each change heard once, by every listener in order.
const { Health } = require('../../logging/hbase-sink/health')
const { JournalFile } = require('../../logging/hbase-sink/journal/journal-file')

test('up/down changes are heard once each, by every listener in the order they came', () => {
  const health = new Health()
  const heard = []
  health.listen({ down: (err) => heard.push(['a', 'down', err.code]), up: () => heard.push(['a', 'up']) })
  health.listen({ down: () => heard.push(['b', 'down']), up: () => heard.push(['b', 'up']) })
  expect([health.down, health.state]).toEqual([false, 'up'])
  health.markUp()
  health.markDown({ code: 'ECONNREFUSED' })
  health.markDown({ code: 'ETIMEDOUT' })
  expect([health.down, health.state]).toEqual([true, 'down'])
  health.markUp()
  health.markUp()
  expect(heard).toEqual([['a', 'down', 'ECONNREFUSED'], ['b', 'down'], ['a', 'up'], ['b', 'up']])
})

test('a journal file adopts lines its replay found beyond its count, never fewer', () => {
  const file = new JournalFile('/j/j-1-w-1.ndjson', { lines: 10, bytes: 900, from: 'j-2-w-1.ndjson' })
  file.adoptLines(8)
  expect(file.lines).toBe(10)
  file.adoptLines(12)
  expect([file.lines, file.name, file.replay]).toEqual([12, 'j-2-w-1.ndjson', null])
})
