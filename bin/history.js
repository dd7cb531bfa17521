'use strict'

/**
 * `beacon config history|rollback <id>` and `beacon rollout history|rollback <endpoint>`: the
 * changes kept of an id's config or an endpoint's rollout (lib/toggles/history.js), and putting
 * one back (admin API …/history and …/rollback).
 */

const KINDS = /** @type {const} */ ([
  { kind: 'config', arg: '<id>', what: 'an id\'s config', path: (/** @type {string} */ t) => `/admin/config/${encodeURIComponent(t)}` },
  {
    kind: 'rollout',
    arg: '<endpoint>',
    what: 'an endpoint\'s rollout',
    path: (/** @type {string} */ t) => `/admin/endpoints/${encodeURIComponent(t)}/rollout`
  }
])

/**
 * @param {{ usageError: (message: string) => Error }} helpers
 * @returns {import('./beacon').Command[]}
 */
function historyCommands ({ usageError }) {
  return KINDS.flatMap(({ kind, arg, what, path }) => [
    {
      words: `${kind} history`,
      args: [arg],
      summary: `every change kept of ${what}, newest first: version, time, actor, what changed`,
      options: {
        limit: { type: 'string', arg: '<n>', help: 'at most n changes (default 100)' },
        json: { type: 'boolean', help: 'print the answer as JSON' }
      },
      run: ([target], values, call) => {
        if (values.limit !== undefined && !/^[1-9][0-9]{0,3}$/.test(values.limit)) {
          throw usageError(`--limit must be a whole number from 1 to 1000, not ${JSON.stringify(values.limit)}`)
        }
        return call('GET', `${path(target)}/history${values.limit ? `?limit=${values.limit}` : ''}`)
      },
      format: (/** @type {any} */ value, /** @type {any} */ values) => ({
        text: values.json ? JSON.stringify(value, null, 2) : historyLines(value.history, kind),
        code: 0
      })
    },
    {
      words: `${kind} rollback`,
      args: [arg],
      summary: `put ${what} back as it was (default: before its newest change); itself a change, kept and audited`,
      options: {
        to: { type: 'string', arg: '<version|time>', help: 'as of this version (from history) or time (-1h, ISO, epoch ms)' }
      },
      notes: ['examples:', `  beacon ${kind} history ${kind === 'config' ? '42' : 'sample5'}`,
        `  beacon ${kind} rollback ${kind === 'config' ? '42' : 'sample5'} --to -1h`],
      run: ([target], values, call) => call('POST', `${path(target)}/rollback${values.to ? `?to=${encodeURIComponent(values.to)}` : ''}`)
    }
  ])
}

/**
 * @param {Array<{ version: number, at: number, actor: string, action: string, value: unknown, rolledBackTo?: number }>} history
 * @param {string} kind
 * @returns {string}
 */
function historyLines (history, kind) {
  if (history.length === 0) return `no change of this ${kind} is kept`
  return history.map((c) => [
    String(c.version),
    new Date(c.at).toISOString(),
    c.actor,
    c.action + (c.rolledBackTo === undefined ? '' : ` (to ${c.rolledBackTo})`),
    c.value === null ? '(none)' : JSON.stringify(c.value)
  ].join('  ')).join('\n')
}

module.exports = { historyCommands, historyLines }
