'use strict'

const { createPathPicker } = require('../lib/paths')
const { parseStat, createSampler } = require('../lib/proc-sampler')

const idOf = (p) => new URLSearchParams(p.path.split('?')[1]).get('id')

describe('request paths', () => {
  test('random: ids in 1..idRange, absent ids at the miss ratio', () => {
    let i = 0
    const seq = [0.1, 0.5, 0.9, 0.05]
    const next = createPathPicker({ endpoint: 'sample3', idRange: 10, missRatio: 0.2 }, () => seq[i++ % seq.length])
    const a = next()
    expect(a.path).toBe('/api/sample3.js?id=absent500000000&callback=EXAMPLE.process')
    expect(idOf(next())).toBe('1')
    const ids = Array.from({ length: 200 }, () => createPathPicker({ endpoint: 'sample1', idRange: 5 })()).map(idOf)
    expect(new Set(ids)).toEqual(new Set(['1', '2', '3', '4', '5']))
  })

  test('sweep: every id in order, each `passes` times', () => {
    const next = createPathPicker({ endpoint: 'sample3', kind: 'sweep', idRange: 3, passes: 2 })
    expect(Array.from({ length: 8 }, () => idOf(next()))).toEqual(['1', '1', '2', '2', '3', '3', '1', '1'])
  })

  test('the OFREP view: a POST of the bulk evaluation with the same ids as the JSONP view, in every kind', () => {
    let i = 0
    const seq = [0, 0.1, 0, 0.5] // (the miss-ratio draw, the id) per request
    const ofrep = createPathPicker({ endpoint: 'sample5', view: 'ofrep', idRange: 10 }, () => seq[i++ % seq.length])
    const a = ofrep()
    expect(a).toEqual({
      path: '/api/sample5/ofrep/v1/evaluate/flags',
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"context":{"targetingKey":"2"}}'
    })
    expect(JSON.parse(ofrep().body).context.targetingKey).toBe('6')
    const sweep = createPathPicker({ endpoint: 'sample3', kind: 'sweep', view: 'ofrep', idRange: 2, passes: 2 })
    expect(Array.from({ length: 5 }, () => JSON.parse(sweep().body).context.targetingKey)).toEqual(['1', '1', '2', '2', '1'])
    // The JSONP view is the default, and has no method or body.
    expect(createPathPicker({ endpoint: 'sample5', view: 'jsonp', idRange: 1 })()).toEqual({
      path: '/api/sample5.js?id=1&callback=EXAMPLE.process'
    })
  })

  test('rejects a bad endpoint, kind or view', () => {
    expect(() => createPathPicker({ endpoint: '../x' })).toThrow(TypeError)
    expect(() => createPathPicker({ endpoint: 'a', kind: 'nope' })).toThrow(TypeError)
    expect(() => createPathPicker({ endpoint: 'a', view: /** @type {any} */ ('xml') })).toThrow(TypeError)
  })
})

describe('proc sampler', () => {
  test('parses /proc/<pid>/stat even with spaces and parentheses in the name', () => {
    const fields = ['S', '42', ...Array(9).fill('0'), '150', '50', ...Array(8).fill('0'), '1000', '0']
    const s = parseStat(`123 (node (x) y) ${fields.join(' ')}`)
    expect(s.ppid).toBe(42)
    expect(s.cpuTicks).toBe(200)
    expect(s.rssBytes).toBeGreaterThanOrEqual(1000 * 4096)
  })

  const linux = process.platform === 'linux' ? test : test.skip
  linux('measures the CPU a busy process burns and its RSS', async () => {
    const sampler = createSampler({ self: () => [process.pid], nobody: () => [] }, { intervalMs: 20 })
    sampler.start()
    // 300 ms of this process's own CPU, however long the machine takes to give it (a wall-clock
    // burn measured less on a loaded machine: 90 ms seen beside the fault tests).
    const before = process.cpuUsage()
    const burned = () => { const u = process.cpuUsage(before); return (u.user + u.system) / 1000 }
    while (burned() < 300) { /* burn */ }
    await new Promise((resolve) => setTimeout(resolve, 50))
    const r = sampler.stop()
    expect(r.self.cpuMs).toBeGreaterThanOrEqual(280) // /proc counts in 10 ms ticks
    expect(r.self.cpuMs).toBeLessThan(2000)
    expect(r.self.peakRssMiB).toBeGreaterThan(10)
    expect(r.nobody).toEqual({ cpuMs: null, cpuUs: null, cpuSource: null, peakRssMiB: null, processes: 0 })
  })
})
