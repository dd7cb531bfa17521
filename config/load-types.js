'use strict'

/**
 * Types of config/load.js: the settings while they are loaded. Typedefs only.
 *
 * @typedef {Record<string, unknown>} Layer a JSON object: one layer of settings as read (file, env,
 *   overrides), or the settings merged so far, before the schema is checked
 *
 * @typedef {object} LoadedEndpoint an endpoint once the schema holds (config/schema.js): the keys load.js reads
 * @property {string} source
 * @property {unknown} [value]
 * @property {string} [valueFile]
 * @property {string[]} accessLog
 * @property {{ sinks: string[] }} [events]
 * @property {{ origins: string[] }} [cors]
 *
 * @typedef {{ type: 'file', path: string } | { type: 'hbase', journalDir: string }} LoadedSink
 *
 * @typedef {object} LoadedSettings the settings once the schema holds, before they are frozen
 * @property {string} stateDir
 * @property {number} port
 * @property {number} adminPort
 * @property {{ requestTimeoutMs: number, headersTimeoutMs: number }} http
 * @property {Record<string, LoadedEndpoint>} endpoints
 * @property {Record<string, LoadedSink>} logSinks
 *
 * @typedef {import('ajv').ErrorObject & { parentSchema: VerboseSchema }} SchemaError an error of a validation
 *   with `verbose`, which gives each its parentSchema
 * @typedef {{ description?: string, propertyNames: { pattern: string },
 *   oneOf: Array<{ properties: { type: { const: unknown } } }> }} VerboseSchema the keys of
 *   config/schema.js load.js reads
 */

module.exports = {}
