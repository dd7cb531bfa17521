'use strict'

/**
 * `beacon audit --from -1d [--to T] [--actor NAME] [--target ID] [--limit N] [--json]`: the
 * audit trail of the admin writes (GET /admin/audit, api/admin/audit.js), oldest first.
 */

/**
 * @param {{ usageError: (message: string) => Error }} helpers
 * @returns {import('./beacon').Command[]}
 */
function auditCommands ({ usageError }) {
  return [{
    words: 'audit',
    args: [],
    summary: 'who changed what: every admin write of a time range, with its actor',
    options: {
      from: { type: 'string', arg: '<time>', help: 'start: -15m, -1d, an ISO time or epoch ms (required)' },
      to: { type: 'string', arg: '<time>', help: 'end (default now)' },
      actor: { type: 'string', arg: '<name>', help: 'only the writes of this admin credential (default, or a BEACON_ADMIN_TOKENS name)' },
      target: { type: 'string', arg: '<id>', help: 'only the writes of this id or endpoint' },
      limit: { type: 'string', arg: '<n>', help: 'at most n records (default 1000)' },
      json: { type: 'boolean', help: 'print the answer as JSON ({from, to, records, truncated})' }
    },
    notes: [
      'examples:',
      '  beacon audit --from -1d',
      '  beacon audit --from -7d --actor ci --target sample5 --json'
    ],
    run: (args, values, call) => {
      if (values.from === undefined) throw usageError('--from is required (for example --from -1d)')
      const q = new URLSearchParams()
      for (const key of ['from', 'to', 'actor', 'target', 'limit']) if (values[key] !== undefined) q.set(key, values[key])
      return call('GET', `/admin/audit?${q}`)
    },
    format: (value, values) => ({ text: values.json ? JSON.stringify(value, null, 2) : auditLines(value), code: 0 })
  }]
}

/**
 * One line per record: time, actor, action, target, what changed.
 * @param {{ records: Array<{ at: number, actor: string, action: string, target: string, change?: object }>,
 *   truncated: boolean }} value
 * @returns {string}
 */
function auditLines ({ records, truncated }) {
  if (records.length === 0) return 'no admin writes in this range'
  const lines = records.map((r) => [new Date(r.at).toISOString(), r.actor, r.action, r.target, r.change ? JSON.stringify(r.change) : '']
    .join('  ').trimEnd())
  if (truncated) lines.push(`(more: cut at ${records.length} records; narrow the range or raise --limit)`)
  return lines.join('\n')
}

module.exports = { auditCommands, auditLines }
