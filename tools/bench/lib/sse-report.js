'use strict'

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

/**
 * The markdown of a tools/bench/sse.js run.
 * @param {any} r the run's result
 * @param {{ stamp: string }} info
 * @returns {string}
 */
function sseMarkdown (r, { stamp }) {
  const ms = (x) => x.toFixed(1)
  const pct = (share) => (share * 100).toFixed(2) + ' %'
  const m = r.machine
  return [
    `# Change streams: ${r.streams.toLocaleString('en')} on one worker (${stamp})`,
    '',
    '`node tools/bench/sse.js` (tools/bench/sse.js): `server.js` with one worker on the running HBase, its sample3 change stream ' +
      `(\`GET /api/sample3/changes?id=…\`) opened ${r.streams.toLocaleString('en')} times over raw sockets from ${r.clientProcesses} ` +
      'client processes (tools/bench/lib/sse-clients.js), every stream watching the same id; heartbeats at the default 15 s.',
    '',
    `Machine: ${m.cores} cores (${m.cpuModel}), ${m.memoryGiB} GiB, ${m.platform}, node ${m.node}; shared with other work.`,
    '',
    '| figure | value |',
    '|---|---|',
    `| streams opened | ${r.open.opened} (${r.open.failed} failed) in ${ms(r.open.ms)} ms, 200 at a time |`,
    `| worker RSS, no stream → all open | ${ms(r.rss.noneMiB)} MiB → ${ms(r.rss.allMiB)} MiB |`,
    `| **RSS per stream** | **${r.rss.perStreamKiB.toFixed(2)} KiB** |`,
    `| worker CPU at idle over ${r.idleSeconds} s, no stream | ${pct(r.idleCpuNone)} of a core |`,
    `| **worker CPU at idle over ${r.idleSeconds} s, all open** | **${pct(r.idleCpuAll)} of a core** |`,
    `| **PUT → last stream's event, p50 / p99 over ${r.puts} PUTs** | **${ms(r.fanout.p50LastMs)} / ${ms(r.fanout.p99LastMs)} ms** |`,
    `| PUT → first / median stream's event, medians over PUTs | ${ms(median(r.fanout.firstMs))} / ` +
      `${ms(median(r.fanout.medianStreamMs))} ms |`,
    `| PUT → its answer (HBase write, then the broadcast), median | ${ms(median(r.fanout.putAnsweredMs))} ms |`,
    `| SIGTERM → last stream ended by the server | ${ms(r.close.lastEndedMs)} ms; ${r.close.clean} of ${r.close.ended} ended cleanly; ` +
      `exit ${r.close.exitCode} |`,
    '',
    'PUT → event is measured from the moment the bench sends the admin PUT (which writes HBase ' +
      'first, then broadcasts) to the moment a client process reads each stream\'s event, on the ' +
      'machine\'s clock as each process sees it (performance.timeOrigin + now(): about 1 ms apart ' +
      'between processes). The first stream shows when the worker started writing; the spread to ' +
      'the last is its write loop and, mostly, the clients reading ten thousand sockets on the cores ' +
      'they share with it. Per PUT, last stream: ' + r.fanout.lastMs.map(ms).join(', ') + ' ms.',
    ''
  ].join('\n')
}

module.exports = { sseMarkdown }
