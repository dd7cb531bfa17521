'use strict'

/**
 * The storage bench's variants and arithmetic (tools/bench/log-bytes.js measures, this computes): the
 * column-family attributes each table gets, the per-row figures, the combined variant chosen from
 * the single ones, and the markdown report. Pure: no HBase, no clock.
 */

/**
 * @typedef {{ name: string, attributes: Record<string, string> }} Variant a table's family attributes
 *
 * @typedef {object} Measured what the bench measured on one variant's table
 * @property {string} name
 * @property {Record<string, string>} attributes
 * @property {number} rows entries written (and found by the full scan)
 * @property {number} keyBytes row-key bytes the sink sent, summed
 * @property {number} valueBytes cell-value bytes the sink sent, summed
 * @property {number} hfileBytes HFile bytes under the table's family dirs after the major compaction
 * @property {number} hfiles
 * @property {number} idleCpuUsPerSec the RegionServer JVM's CPU per second with no client
 * @property {{ seconds: number, flushSeconds: number, cpuUs: number }} write seconds: from the first entry until
 *   HBase acknowledged the last; cpuUs: over those and the flush after them (flushSeconds)
 * @property {{ seconds: number, cpuUs: number }} compaction the major compaction
 * @property {{ rows: number, seconds: number, cpuUs: number }} scan `log scan` of the whole day
 * @property {{ rows: number, examined: number, seconds: number, cpuUs: number }} filteredScan `log
 *   scan` of one id over the day: HBase's filter reads every row, returns the id's
 */

/** Today's layout first: every ratio is to it. */
const BASELINE = 'none'

/** @type {Variant[]} */
const VARIANTS = [
  { name: BASELINE, attributes: {} },
  { name: 'fast-diff', attributes: { DATA_BLOCK_ENCODING: 'FAST_DIFF' } },
  { name: 'row-index-v1', attributes: { DATA_BLOCK_ENCODING: 'ROW_INDEX_V1' } },
  { name: 'gz', attributes: { COMPRESSION: 'GZ' } },
  { name: 'zstd', attributes: { COMPRESSION: 'ZSTD' } },
  { name: 'lz4', attributes: { COMPRESSION: 'LZ4' } }
]

/**
 * The JVM's whole CPU over a step, per item. Its idle burn is not taken off: sampled for seconds
 * before a step, it is noise (a JIT still compiling after the previous table) as often as signal,
 * and it is small next to a step's work; the report states it.
 * @param {number} cpuUs
 * @param {number} items
 * @returns {number|null}
 */
function perItem (cpuUs, items) {
  return !(items > 0) || cpuUs == null ? null : cpuUs / items
}

/**
 * @param {number} n
 * @param {number} seconds
 * @returns {number|null}
 */
function perSecond (n, seconds) {
  return seconds > 0 ? n / seconds : null
}

/**
 * The per-row figures of each measured variant, with its size against today's layout.
 * @param {Measured[]} measured
 * @returns {Array<ReturnType<typeof summarizeOne>>}
 */
function summarize (measured) {
  const base = measured.find((m) => m.name === BASELINE)
  const baseBytes = base ? base.hfileBytes / base.rows : null
  return measured.map((m) => summarizeOne(m, baseBytes))
}

/**
 * @param {Measured} m
 * @param {number|null} baseBytesPerRow
 */
function summarizeOne (m, baseBytesPerRow) {
  const bytesPerRow = m.hfileBytes / m.rows
  const writeCpu = perItem(m.write.cpuUs, m.rows)
  const compactionCpu = perItem(m.compaction.cpuUs, m.rows)
  return {
    name: m.name,
    attributes: m.attributes,
    rows: m.rows,
    bytesPerRow,
    vsToday: baseBytesPerRow ? bytesPerRow / baseBytesPerRow : null,
    writeCpuUsPerEntry: writeCpu,
    writeRowsPerSec: perSecond(m.rows, m.write.seconds),
    compactionCpuUsPerEntry: compactionCpu,
    compactionSeconds: m.compaction.seconds,
    storeCpuUsPerEntry: writeCpu == null || compactionCpu == null ? null : writeCpu + compactionCpu,
    scanRowsPerSec: perSecond(m.scan.rows, m.scan.seconds),
    scanCpuUsPerRow: perItem(m.scan.cpuUs, m.scan.rows),
    filteredScanRowsPerSec: perSecond(m.filteredScan.examined, m.filteredScan.seconds),
    filteredScanCpuUsPerRow: perItem(m.filteredScan.cpuUs, m.filteredScan.examined)
  }
}

/**
 * The combinations worth measuring after the single variants: the encoding with the fewest
 * bytes per row together with the compression with the fewest, and with the compression that
 * costs the RegionServer least (writes + compaction), when that is another one.
 * @param {ReturnType<typeof summarize>} summaries of the single variants
 * @returns {Variant[]}
 */
function combinedVariants (summaries) {
  const only = (key) => summaries.filter((s) => Object.keys(s.attributes).length === 1 && s.attributes[key])
  const least = (list, figure) => list.reduce((best, s) => (best === null || figure(s) < figure(best) ? s : best), null)
  const encoding = least(only('DATA_BLOCK_ENCODING'), (s) => s.bytesPerRow)
  const compressions = only('COMPRESSION')
  if (!encoding || compressions.length === 0) return []
  const picks = [least(compressions, (s) => s.bytesPerRow), least(compressions, (s) => s.storeCpuUsPerEntry ?? Infinity)]
  const seen = new Set()
  return picks.filter((s) => !seen.has(s.name) && seen.add(s.name)).map((s) => ({
    name: `${encoding.name}+${s.name}`,
    attributes: { ...encoding.attributes, ...s.attributes }
  }))
}

/**
 * @param {Record<string, string>} attributes
 * @returns {string} as HBase's shell would write them, or "none"
 */
function describeAttributes (attributes) {
  const entries = Object.entries(attributes)
  return entries.length === 0 ? 'none' : entries.map(([k, v]) => `${k} => '${v}'`).join(', ')
}

/**
 * @param {number|null|undefined} n
 * @param {number} [digits]
 * @returns {string}
 */
function fmt (n, digits = 0) {
  if (n == null || !Number.isFinite(n)) return '–'
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
}

/**
 * What a row is made of before HBase stores it: key and value bytes as the sink sent them, per row.
 * @param {Measured} m
 * @returns {{ keyBytes: number, valueBytes: number, valueShare: number }}
 */
function logicalRow (m) {
  const keyBytes = m.keyBytes / m.rows
  const valueBytes = m.valueBytes / m.rows
  return { keyBytes, valueBytes, valueShare: valueBytes / (keyBytes + valueBytes) }
}

/**
 * Bytes a host's log takes a day at `viewsPerSec` logged views, at `bytesPerRow` on disk.
 * @param {number} bytesPerRow
 * @param {number} viewsPerSec
 * @returns {number} bytes (one copy: HDFS replication multiplies it)
 */
function bytesPerDay (bytesPerRow, viewsPerSec) {
  return bytesPerRow * viewsPerSec * 86400
}

/**
 * @param {Measured[]} measured
 * @returns {string} the idle samples' range, e.g. "9,116–173,333"
 */
function idleRange (measured) {
  const idle = measured.map((m) => m.idleCpuUsPerSec)
  return `${fmt(Math.min(...idle))}–${fmt(Math.max(...idle))}`
}

const TABLE_HEAD = [
  '| variant | family attributes | bytes/row on disk | vs today | RS CPU µs/entry, writes | writes rows/s | ' +
    'RS CPU µs/entry, major compaction | compaction s | `log scan` rows/s | RS CPU µs/row, scan | ' +
    'one-id scan, rows read/s | RS CPU µs/row read, one-id scan |',
  '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|'
]

/**
 * @param {{ date: string, machine: Record<string, any>, parameters: Record<string, any>,
 *   measured: Measured[], viewsPerSec: number }} report
 * @returns {string}
 */
function markdown (report) {
  const summaries = summarize(report.measured)
  const rows = summaries.map((s) => `| ${s.name} | ${describeAttributes(s.attributes)} | ${fmt(s.bytesPerRow, 1)} | ` +
    `${fmt(s.vsToday, 2)} | ${fmt(s.writeCpuUsPerEntry, 1)} | ${fmt(s.writeRowsPerSec)} | ${fmt(s.compactionCpuUsPerEntry, 1)} | ` +
    `${fmt(s.compactionSeconds, 1)} | ${fmt(s.scanRowsPerSec)} | ${fmt(s.scanCpuUsPerRow, 2)} | ${fmt(s.filteredScanRowsPerSec)} | ` +
    `${fmt(s.filteredScanCpuUsPerRow, 2)} |`)
  const base = report.measured.find((m) => m.name === BASELINE) || report.measured[0]
  const row = logicalRow(base)
  const perDay = summaries.map((s) => `| ${s.name} | ${fmt(bytesPerDay(s.bytesPerRow, report.viewsPerSec) / 1e9, 1)} GB |`)
  const p = report.parameters
  return [
    `# Access-log bytes per entry — ${report.date}`,
    '',
    `\`${p.command}\`: ${fmt(p.rows)} access-log entries per variant, written through the HBase sink ` +
      '(logging/hbase-sink/) into a table of their own (16 salt buckets, 8 regions), then flushed, major-compacted and ' +
      'reopened; bytes are the HFiles under the table\'s family dirs divided by the rows. ' +
      `HBase ${p.hbaseVersion} standalone (JVM profile \`${p.jvm}\`, heap ${p.heap}) on ` +
      `${report.machine.cores} cores (${report.machine.cpuModel}), node ${report.machine.node}.`,
    '',
    ...TABLE_HEAD,
    ...rows,
    '',
    '- **RS CPU** is the HBase JVM\'s (standalone: master, RegionServer and ZooKeeper in one process) utime + stime from ' +
      '/proc over each step, divided by the entries; what it burns with no client (sampled 3 s before each variant: ' +
      `${idleRange(report.measured)} µs/s) is included. **writes** runs from the first entry to the end of the flush after ` +
      'the last, so it holds the RPCs, the WAL, the memstore and every flush (where HFiles are first encoded and ' +
      'compressed); **major compaction** rewrites every HFile once.',
    '- **`log scan`** reads the whole day through logging/query/ (`createLogQuery().scan()`: one scan per salt bucket, ' +
      'merged in time order, each row parsed), right after the reopen, so the block cache holds none of the table; ' +
      '**one-id scan** is `log scan --id` of one id over the day: HBase\'s value filter reads every row and returns ' +
      'that id\'s, so its speed is the RegionServer reading (and decompressing) the table; it runs first after the reopen.',
    '',
    '## What a row is made of',
    '',
    `As the sink sends it: a row key of ${fmt(row.keyBytes, 1)} bytes and a value (the entry's JSON) of ` +
      `${fmt(row.valueBytes, 1)} bytes: the value is ${fmt(row.valueShare * 100, 0)}% of the row's own bytes. ` +
      `Today's layout stores ${fmt(base.hfileBytes / base.rows, 1)} bytes per row: the rest is the KeyValue's frame ` +
      '(lengths, family, qualifier, timestamp, type), block headers, indexes and the bloom filter.',
    '',
    `## Per day per host at ${fmt(report.viewsPerSec)} logged views/s`,
    '',
    '| variant | one copy a day |',
    '|---|---:|',
    ...perDay,
    ''
  ].join('\n')
}

module.exports = {
  BASELINE,
  VARIANTS,
  summarize,
  combinedVariants,
  describeAttributes,
  logicalRow,
  bytesPerDay,
  markdown
}
