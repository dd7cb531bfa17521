'use strict'

const {
  BASELINE, VARIANTS, summarize, combinedVariants, describeAttributes, logicalRow, bytesPerDay, markdown
} = require('../lib/log-bytes-report')

/** A measured variant; `over` replaces any field. */
function measured (name, attributes, over = {}) {
  return {
    name,
    attributes,
    rows: 1000,
    keyBytes: 30000,
    valueBytes: 270000,
    hfileBytes: 350000,
    hfiles: 8,
    idleCpuUsPerSec: 1000,
    write: { seconds: 9, flushSeconds: 1, cpuUs: 60000 },
    compaction: { seconds: 2, cpuUs: 12000 },
    scan: { rows: 1000, seconds: 0.5, cpuUs: 5500 },
    filteredScan: { rows: 3, examined: 1000, seconds: 0.25, cpuUs: 2250 },
    ...over
  }
}

test('the variants start with today\'s layout and name each attribute as HBase does', () => {
  expect(VARIANTS[0]).toEqual({ name: BASELINE, attributes: {} })
  for (const v of VARIANTS.slice(1)) {
    expect(Object.keys(v.attributes)).toHaveLength(1)
    expect(['DATA_BLOCK_ENCODING', 'COMPRESSION']).toContain(Object.keys(v.attributes)[0])
  }
  expect(VARIANTS.map((v) => Object.values(v.attributes)[0]).slice(1)).toEqual(['FAST_DIFF', 'ROW_INDEX_V1', 'GZ', 'ZSTD', 'LZ4'])
})

test('per-row figures: bytes, ratio to today, the JVM\'s CPU per entry, rates', () => {
  const [base, gz] = summarize([measured('none', {}), measured('gz', { COMPRESSION: 'GZ' }, { hfileBytes: 70000 })])
  expect(base.bytesPerRow).toBe(350)
  expect(base.vsToday).toBe(1)
  expect(gz.bytesPerRow).toBe(70)
  expect(gz.vsToday).toBeCloseTo(0.2)
  expect(base.writeCpuUsPerEntry).toBe(60)
  expect(base.writeRowsPerSec).toBeCloseTo(1000 / 9)
  expect(base.compactionCpuUsPerEntry).toBe(12)
  expect(base.storeCpuUsPerEntry).toBe(72)
  expect(base.scanRowsPerSec).toBe(2000)
  expect(base.scanCpuUsPerRow).toBe(5.5)
  expect(base.filteredScanRowsPerSec).toBe(4000)
  expect(base.filteredScanCpuUsPerRow).toBe(2.25)
})

test('no baseline, no ratio; no CPU figure, none per entry', () => {
  const [s] = summarize([measured('gz', { COMPRESSION: 'GZ' }, { compaction: { seconds: 2, cpuUs: null } })])
  expect(s.compactionCpuUsPerEntry).toBeNull()
  expect(s.storeCpuUsPerEntry).toBeNull()
  expect(s.vsToday).toBeNull()
})

test('combined: the smallest encoding with the smallest compression and with the cheapest', () => {
  const summaries = summarize([
    measured('none', {}),
    measured('fast-diff', { DATA_BLOCK_ENCODING: 'FAST_DIFF' }, { hfileBytes: 300000 }),
    measured('row-index-v1', { DATA_BLOCK_ENCODING: 'ROW_INDEX_V1' }, { hfileBytes: 360000 }),
    measured('gz', { COMPRESSION: 'GZ' }, { hfileBytes: 80000, compaction: { seconds: 2, cpuUs: 90000 } }),
    measured('zstd', { COMPRESSION: 'ZSTD' }, { hfileBytes: 70000, compaction: { seconds: 2, cpuUs: 40000 } }),
    measured('lz4', { COMPRESSION: 'LZ4' }, { hfileBytes: 120000, compaction: { seconds: 2, cpuUs: 15000 } })
  ])
  expect(combinedVariants(summaries)).toEqual([
    { name: 'fast-diff+zstd', attributes: { DATA_BLOCK_ENCODING: 'FAST_DIFF', COMPRESSION: 'ZSTD' } },
    { name: 'fast-diff+lz4', attributes: { DATA_BLOCK_ENCODING: 'FAST_DIFF', COMPRESSION: 'LZ4' } }
  ])
})

test('combined: one variant when the smallest compression is also the cheapest; none without both kinds', () => {
  const summaries = summarize([
    measured('none', {}),
    measured('fast-diff', { DATA_BLOCK_ENCODING: 'FAST_DIFF' }),
    measured('zstd', { COMPRESSION: 'ZSTD' }, { hfileBytes: 70000 }),
    measured('lz4', { COMPRESSION: 'LZ4' }, { hfileBytes: 120000, write: { seconds: 9, flushSeconds: 1, cpuUs: 90000 } })
  ])
  expect(combinedVariants(summaries).map((v) => v.name)).toEqual(['fast-diff+zstd'])
  expect(combinedVariants(summaries.filter((s) => !s.attributes.COMPRESSION))).toEqual([])
})

test('attributes read as in the HBase shell; a row split into key and value', () => {
  expect(describeAttributes({})).toBe('none')
  expect(describeAttributes({ DATA_BLOCK_ENCODING: 'FAST_DIFF', COMPRESSION: 'ZSTD' }))
    .toBe("DATA_BLOCK_ENCODING => 'FAST_DIFF', COMPRESSION => 'ZSTD'")
  expect(logicalRow(measured('none', {}))).toEqual({ keyBytes: 30, valueBytes: 270, valueShare: 0.9 })
})

test('a day at 10,000 views/s', () => {
  expect(bytesPerDay(100, 10000)).toBe(100 * 10000 * 86400)
})

test('the markdown report has a row per variant and the day\'s size', () => {
  const md = markdown({
    date: '2026-11-26T12:00:00.000Z',
    machine: { cores: 2, cpuModel: 'test cpu', node: 'v20' },
    parameters: { command: 'npm run bench:log-bytes', rows: 1000, hbaseVersion: '2.6.1', jvm: 'server', heap: '1g' },
    viewsPerSec: 10000,
    measured: [measured('none', {}), measured('zstd', { COMPRESSION: 'ZSTD' }, { hfileBytes: 70000 })]
  })
  expect(md).toContain('| none | none | 350.0 | 1.00 | 60.0 |')
  expect(md).toContain('(sampled 3 s before each variant: 1,000–1,000 µs/s)')
  expect(md).toContain("| zstd | COMPRESSION => 'ZSTD' | 70.0 | 0.20 |")
  expect(md).toContain('the value is 90% of the row')
  expect(md).toContain('| none | 302.4 GB |')
  expect(md).toContain('| zstd | 60.5 GB |')
})
