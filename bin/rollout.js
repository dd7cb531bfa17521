'use strict'

/**
 * `beacon rollout get|set|delete <endpoint>`: an endpoint's percentage rollout for the ids that
 * have no row of their own (lib/toggles/rollout.js; admin API /admin/endpoints/:name/rollout).
 */

/**
 * @param {{ readJson: (value: string, what: string) => string }} helpers readJson: inline JSON or
 *   `@file.json`, checked to parse (a usage error names `what` otherwise)
 * @returns {import('./beacon').Command[]}
 */
function rolloutCommands ({ readJson }) {
  const at = (/** @type {string} */ name) => `/admin/endpoints/${encodeURIComponent(name)}/rollout`
  return [
    {
      words: 'rollout get',
      args: ['<endpoint>'],
      summary: 'the rollout of an endpoint\'s ids without a row, and its version',
      run: ([name], v, call) => call('GET', at(name))
    },
    {
      words: 'rollout set',
      args: ['<endpoint>', '<json>|@file.json'],
      summary: 'split the ids without a row into weighted variants, on every host',
      notes: [
        'The rollout: {"salt": "…", "variants": [{"name": "A", "weight": 90, "config": {…}}, …]}; weights add up to 100.',
        'An id keeps its variant while the weights stay; raising a variant\'s weight only moves ids into it.',
        'example: beacon rollout set sample5 \'{"salt":"checkout-2026","variants":[{"name":"A","weight":90,' +
          '"config":{"checkout":"old"}},{"name":"B","weight":10,"config":{"checkout":"new"}}]}\''
      ],
      run: ([name, value], v, call) => call('PUT', at(name), { body: readJson(value, 'the rollout') })
    },
    {
      words: 'rollout delete',
      args: ['<endpoint>'],
      summary: 'remove the rollout: the ids without a row get the endpoint default again',
      run: async ([name], v, call) => {
        await call('DELETE', at(name))
        return { endpoint: name, deleted: true }
      }
    }
  ]
}

module.exports = { rolloutCommands }
