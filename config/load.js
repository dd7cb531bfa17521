'use strict'

const fs = require('node:fs')
const path = require('node:path')
const Ajv = require('ajv')
const {
  DEFAULTS, ENDPOINT_DEFAULTS, LRU_CACHE_DEFAULTS, CORS_DEFAULTS, EVENT_DEFAULTS,
  SINK_DEFAULTS, SINK_PRIVACY_DEFAULTS, ENV_VARS, CONFIG_FILE_ENV, CONFIG_DIR
} = require('./defaults')
const { schema } = require('./schema')
const { fillOfrep, resolveOfrepKeys } = require('./ofrep')
const { retentionIssues } = require('./duration')
const { ERRORS } = require('../lib/errors')
const { originOf, forget, valueAt, displayPointer, escapePointer } = require('./pointer')
const { parseEnv, BOOLEAN_TEXT } = require('./env-values')

// ajv's CommonJS export is the class itself (its types describe the ES module).
const ajv = new (/** @type {any} */ (Ajv))({ allErrors: true, discriminator: true, allowUnionTypes: true, verbose: true })
const validateSchema = ajv.compile(schema)

// Maps of named entries, where `null` removes an entry declared by a lower layer.
const COLLECTIONS = new Set(['endpoints', 'logSinks'])
// Endpoint keys that hold config data, not settings: a layer replaces them whole.
const DATA_KEYS = new Set(['value', 'defaultConfig'])

/**
 * @typedef {import('./load-types').Layer} Layer
 * @typedef {import('./load-types').LoadedSettings} LoadedSettings
 * @typedef {Readonly<Record<string, any>>} Settings deep-frozen, validated settings (shape: config/schema.js)
 */

/**
 * Loads the settings. Sources, lowest to highest: config/defaults.js; a JSON file (`file`, else
 * env BEACON_CONFIG_FILE); environment variables (defaults.js ENV_VARS); `overrides`.
 *
 * Layers deep-merge: objects merge key by key, arrays and scalars replace. In `endpoints` and
 * `logSinks` an entry set to null is removed. An endpoint's `value` and `defaultConfig` are
 * replaced whole, and setting `value` or `valueFile` drops the other one from lower layers. An
 * object whose `source` (endpoint) or `type` (cache, sink) changes is replaced, not merged,
 * because the old kind's keys would not fit the new one. Shorthands: `cache: 'off' | 'lru'`,
 * `accessLog: 'none'`.
 *
 * @param {object} [options]
 * @param {Record<string, string|undefined>} [options.env] environment (default process.env)
 * @param {string} [options.file] JSON settings file; relative paths resolve against the cwd
 * @param {object} [options.overrides] highest layer, same shape as the file (tests use it)
 * @returns {Settings}
 * @throws {Error} code CONFIG_INVALID; the message names every bad key and where it was set
 */
function loadSettings ({ env = process.env, file, overrides } = {}) {
  /** @type {string[]} */
  const issues = []
  /** @type {Map<string, string>} JSON pointer → where it was last set */
  const origins = new Map()
  /** @type {Layer} */
  const settings = structuredClone(DEFAULTS)

  const fileName = file || env[CONFIG_FILE_ENV]
  if (fileName) {
    const filePath = path.resolve(fileName)
    const layer = readJsonObject(filePath, 'settings file')
    for (const secret of ['adminToken', 'adminTokens', 'metricsToken'].filter((key) => Object.hasOwn(layer, key))) {
      issues.push(`${secret} must not be set in the settings file ${filePath}: ` +
        `secrets come from the environment (${envNameOf(secret)})`)
      delete layer[secret]
    }
    applyLayer(settings, layer, 'in ' + filePath, origins, issues)
  }

  for (const [name, keyPath, kind] of ENV_VARS) {
    const raw = env[name]
    if (raw === undefined || raw === null || raw === '') continue
    const keys = keyPath.split('.')
    if (keys[0] === 'logSinks' && !isPlainObject(/** @type {Layer} */ (settings.logSinks)[keys[1]])) continue
    applyLayer(settings, nest(keys, parseEnv(String(raw), kind)), 'from env ' + name, origins, issues)
  }

  if (overrides !== undefined) {
    if (!isPlainObject(overrides)) throw invalid(['overrides must be an object'])
    let layer
    try {
      layer = structuredClone(overrides)
    } catch {
      throw invalid(['overrides must hold plain data (no functions or class instances)'])
    }
    applyLayer(settings, layer, 'in overrides', origins, issues)
  }

  fillDefaults(settings)
  // Later checks assume the schema holds, so a schema failure stops here.
  if (!validateSchema(settings)) throw invalid([...issues, ...schemaIssues(validateSchema.errors, settings, origins)])

  // The schema holds from here on.
  const valid = /** @type {LoadedSettings} */ (/** @type {unknown} */ (settings))
  resolveValueFiles(valid, origins, issues)
  resolveOfrepKeys(valid, env,
    (name) => originOf(origins, `/endpoints/${escapePointer(name)}/ofrep/apiKeysEnv`), issues)
  resolvePaths(valid)
  crossCheck(valid, origins, issues)
  if (issues.length) throw invalid(issues)
  return deepFreeze(valid)
}

/**
 * One row per endpoint, for the README and the startup log.
 * @param {Settings} settings
 * @returns {{ name: string, path: string, source: string, cache: string, accessLog: string[], enabled: boolean }[]}
 */
function describeEndpoints (settings) {
  return Object.entries(settings.endpoints).map(([name, e]) => ({
    name,
    path: '/api/' + name + '.js',
    source: e.source,
    cache: e.cache.type,
    accessLog: [...e.accessLog],
    enabled: e.enabled
  }))
}

/** @param {Layer} settings @param {Layer} layer @param {string} origin @param {Map<string, string>} origins @param {string[]} issues */
function applyLayer (settings, layer, origin, origins, issues) {
  normalizeShorthands(layer)
  merge(settings, layer, '', [], origin, origins, issues)
}

/** @param {Layer} layer */
function normalizeShorthands (layer) {
  for (const sink of isPlainObject(layer.logSinks) ? Object.values(layer.logSinks) : []) {
    // `durable: true|false`, the older spelling (BEACON_ACCESS_LOG_DURABLE): durability process|memory
    if (!isPlainObject(sink) || typeof sink.durable !== 'boolean') continue
    if (!Object.hasOwn(sink, 'durability')) sink.durability = sink.durable ? 'process' : 'memory'
    delete sink.durable
  }
  if (!isPlainObject(layer.endpoints)) return
  for (const endpoint of Object.values(layer.endpoints)) {
    if (!isPlainObject(endpoint)) continue
    if (endpoint.cache === 'off' || endpoint.cache === 'lru') endpoint.cache = { type: endpoint.cache }
    if (endpoint.accessLog === 'none') endpoint.accessLog = []
  }
}

/**
 * @param {Layer} target @param {Layer} layer @param {string} pointer of target @param {string[]} keys path of target
 * @param {string} origin @param {Map<string, string>} origins @param {string[]} issues
 */
function merge (target, layer, pointer, keys, origin, origins, issues) {
  for (const key of Object.keys(layer)) {
    const value = layer[key]
    if (value === undefined) continue
    const childPointer = pointer + '/' + escapePointer(key)
    if (key === '__proto__') {
      issues.push(`${[...keys, key].join('.')} is not an allowed key (${origin})`)
      continue
    }
    if (value === null && keys.length === 1 && COLLECTIONS.has(keys[0])) {
      delete target[key]
      forget(origins, childPointer)
      continue
    }
    const current = Object.hasOwn(target, key) ? target[key] : undefined
    const isData = keys.length === 2 && keys[0] === 'endpoints' && DATA_KEYS.has(key)
    if (isPlainObject(value) && isPlainObject(current) && !isData && !kindChanged(current, value)) {
      if (keys.length === 1 && keys[0] === 'endpoints' && (Object.hasOwn(value, 'value') || Object.hasOwn(value, 'valueFile'))) {
        delete current.value
        delete current.valueFile
      }
      merge(current, value, childPointer, [...keys, key], origin, origins, issues)
    } else {
      target[key] = value
      forget(origins, childPointer)
      origins.set(childPointer, origin)
    }
  }
}

// The kind of an endpoint (`source`) or of a cache or sink (`type`).
/** @param {Layer} current @param {Layer} value */
function kindChanged (current, value) {
  return (Object.hasOwn(value, 'type') && Object.hasOwn(current, 'type') && value.type !== current.type) ||
    (Object.hasOwn(value, 'source') && Object.hasOwn(current, 'source') && value.source !== current.source)
}

/** @param {Layer} settings */
function fillDefaults (settings) {
  if (isPlainObject(settings.endpoints)) {
    for (const endpoint of Object.values(settings.endpoints)) {
      if (!isPlainObject(endpoint)) continue
      fillMissing(endpoint, ENDPOINT_DEFAULTS)
      if (isPlainObject(endpoint.cache) && endpoint.cache.type === 'lru') fillMissing(endpoint.cache, LRU_CACHE_DEFAULTS)
      if (isPlainObject(endpoint.cors)) fillMissing(endpoint.cors, CORS_DEFAULTS)
      if (isPlainObject(endpoint.events)) fillMissing(endpoint.events, EVENT_DEFAULTS)
      fillOfrep(endpoint)
    }
  }
  if (isPlainObject(settings.logSinks)) {
    for (const [name, sink] of Object.entries(settings.logSinks)) {
      const type = /** @type {string} */ (isPlainObject(sink) ? sink.type : undefined)
      if (!isPlainObject(sink) || !Object.hasOwn(SINK_DEFAULTS, type)) continue
      fillMissing(sink, { ...(/** @type {Record<string, Layer>} */ (SINK_DEFAULTS)[type]), privacy: {} })
      if (isPlainObject(sink.privacy)) fillMissing(sink.privacy, SINK_PRIVACY_DEFAULTS)
      if (sink.type === 'hbase' && !Object.hasOwn(sink, 'journalDir')) sink.journalDir = 'journal/' + name
    }
  }
}

/** @param {Layer} target @param {Record<string, unknown>} defaults */
function fillMissing (target, defaults) {
  for (const key of Object.keys(defaults)) {
    if (!Object.hasOwn(target, key)) target[key] = structuredClone(defaults[key])
  }
}

/** @param {LoadedSettings} settings @param {Map<string, string>} origins @param {string[]} issues */
function resolveValueFiles (settings, origins, issues) {
  for (const [name, endpoint] of Object.entries(settings.endpoints)) {
    if (endpoint.valueFile === undefined) continue
    const at = `endpoints.${name}`
    const where = originOf(origins, `/endpoints/${escapePointer(name)}/valueFile`)
    if (endpoint.value !== undefined) {
      issues.push(`${at}: set value or valueFile, not both${where}`)
      continue
    }
    const filePath = path.resolve(CONFIG_DIR, endpoint.valueFile)
    try {
      endpoint.value = readJsonObject(filePath, `${at}.valueFile`)
      endpoint.valueFile = filePath
    } catch (err) {
      issues.push(/** @type {{ issues: string[] }} */ (err).issues.join('; ') + where)
    }
  }
}

/** @param {LoadedSettings} settings */
function resolvePaths (settings) {
  settings.stateDir = path.resolve(settings.stateDir)
  for (const sink of Object.values(settings.logSinks)) {
    if (sink.type === 'file') sink.path = path.resolve(settings.stateDir, sink.path)
    else sink.journalDir = path.resolve(settings.stateDir, sink.journalDir)
  }
}

/** @param {LoadedSettings} settings @param {Map<string, string>} origins @param {string[]} issues */
function crossCheck (settings, origins, issues) {
  const sinkNames = Object.keys(settings.logSinks)
  for (const [name, endpoint] of Object.entries(settings.endpoints)) {
    const pointer = `/endpoints/${escapePointer(name)}`
    const where = originOf(origins, pointer)
    if (endpoint.source === 'fixed' && endpoint.value === undefined) {
      issues.push(`endpoints.${name}.value is required for a fixed endpoint (set value or valueFile)${where}`)
    }
    if (endpoint.source !== 'fixed' && (endpoint.value !== undefined || endpoint.valueFile !== undefined)) {
      const key = endpoint.valueFile !== undefined ? 'valueFile' : 'value'
      issues.push(`endpoints.${name}.${key} applies only to fixed endpoints${originOf(origins, pointer + '/' + key)}`)
    }
    /** @type {Array<[string, string[]]>} */
    const sinkLists = [['accessLog', endpoint.accessLog], ['events.sinks', endpoint.events ? endpoint.events.sinks : []]]
    for (const [key, list] of sinkLists) {
      for (const sinkName of list.filter((n) => !sinkNames.includes(n))) {
        issues.push(`endpoints.${name}.${key} names unknown sink "${sinkName}" (declared sinks: ` +
          `${sinkNames.join(', ') || 'none'})${originOf(origins, pointer + '/' + key.replace('.', '/'))}`)
      }
    }
    if (endpoint.cors && endpoint.cors.origins.length > 1 && endpoint.cors.origins.includes('*')) {
      issues.push(`endpoints.${name}.cors.origins: "*" (any origin) must stand alone${originOf(origins, pointer + '/cors/origins')}`)
    }
  }
  const { http } = settings
  // node:http refuses to start with a headers timeout longer than the request timeout.
  if (http.requestTimeoutMs > 0 && http.headersTimeoutMs > http.requestTimeoutMs) {
    issues.push(`http.headersTimeoutMs must be <= http.requestTimeoutMs${originOf(origins, '/http/headersTimeoutMs')}`)
  }
  if (settings.port !== 0 && settings.port === settings.adminPort) {
    issues.push(`adminPort must differ from port (both ${settings.port})${originOf(origins, '/adminPort')}`)
  }
  retentionIssues(settings.logSinks, (name, key) => originOf(origins, `/logSinks/${escapePointer(name)}/${key}`), issues)
  /** @type {Map<string, string>} */
  const owners = new Map()
  for (const [name, sink] of Object.entries(settings.logSinks)) {
    const [key, where] = sink.type === 'file' ? ['path', sink.path] : ['journalDir', sink.journalDir]
    const other = owners.get(where)
    // Two writers on one file or journal would interleave and corrupt each other.
    if (other) issues.push(`logSinks.${name}.${key} is also used by logSinks.${other} (${where})`)
    else owners.set(where, name)
  }
}

/**
 * @param {import('./load-types').SchemaError[]} errors
 * @param {Layer} settings @param {Map<string, string>} origins
 * @returns {string[]}
 */
function schemaIssues (errors, settings, origins) {
  /** @type {string[]} */
  const messages = []
  /** @type {string[]} */
  const explained = [] // schema paths of oneOf failures already described as a whole
  for (const e of errors) {
    if (e.keyword === 'oneOf' && e.parentSchema.description) explained.push(e.schemaPath + '/')
  }
  for (const e of errors) {
    if (explained.some((prefix) => e.schemaPath.startsWith(prefix))) continue
    if (e.keyword === 'pattern' && e.schemaPath.includes('/propertyNames/')) continue
    let pointer = e.instancePath
    let originPointer = pointer
    let text = e.message
    switch (e.keyword) {
      case 'additionalProperties':
        pointer = originPointer = pointer + '/' + escapePointer(e.params.additionalProperty)
        text = 'is not a known key'
        break
      case 'required':
        pointer += '/' + escapePointer(e.params.missingProperty)
        text = 'is required'
        break
      case 'propertyNames':
        pointer = originPointer = pointer + '/' + escapePointer(e.params.propertyName)
        text = `is not a valid name (must match ${e.parentSchema.propertyNames.pattern})`
        break
      case 'enum':
        text = 'must be one of: ' + e.params.allowedValues.map((/** @type {unknown} */ v) => JSON.stringify(v)).join(', ')
        break
      case 'discriminator':
        if (e.params.error === 'tag' && !Object.hasOwn(/** @type {object} */ (valueAt(settings, pointer) || {}), 'type')) continue
        pointer = originPointer = pointer + '/type'
        text = e.params.error === 'mapping'
          ? 'must be one of: ' + e.parentSchema.oneOf.map((s) => JSON.stringify(s.properties.type.const)).join(', ')
          : 'must be a string'
        break
      case 'oneOf':
      case 'type':
      case 'pattern':
        if (e.parentSchema.description) text = 'must be ' + e.parentSchema.description
        // An environment variable is text: say every spelling it may use (env-values.js).
        if (e.parentSchema.type === 'boolean' && originOf(origins, originPointer).includes('env')) text = BOOLEAN_TEXT
        break
    }
    messages.push(displayPointer(pointer, settings) + ' ' + text + originOf(origins, originPointer))
  }
  return [...new Set(messages)]
}

/** @param {string} filePath @param {string} what @returns {Layer} */
function readJsonObject (filePath, what) {
  let text
  try {
    text = fs.readFileSync(filePath, 'utf8')
  } catch (err) {
    const e = /** @type {NodeJS.ErrnoException} */ (err)
    throw invalid([`cannot read ${what} ${filePath}: ${e.code || e.message}`])
  }
  let value
  try {
    value = JSON.parse(text)
  } catch (err) {
    throw invalid([`${what} ${filePath} is not valid JSON: ${/** @type {Error} */ (err).message}`])
  }
  if (!isPlainObject(value)) throw invalid([`${what} ${filePath} must hold a JSON object`])
  return value
}

/** @param {string} keyPath */
function envNameOf (keyPath) {
  const row = ENV_VARS.find(([, p]) => p === keyPath)
  return row ? row[0] : keyPath
}

/** @param {string[]} keys at least one @param {unknown} value @returns {Layer} */
function nest (keys, value) {
  return /** @type {Layer} */ (keys.reduceRight((inner, key) => ({ [key]: inner }), value))
}

/** @param {unknown} value @returns {value is Layer} */
function isPlainObject (value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

/** @template T @param {T} value @returns {T} */
function deepFreeze (value) {
  if (value !== null && typeof value === 'object') {
    Object.freeze(value)
    for (const key of Object.keys(value)) deepFreeze(/** @type {Record<string, unknown>} */ (value)[key])
  }
  return value
}

/** @param {string[]} issues */
function invalid (issues) {
  const err = new ERRORS.CONFIG_INVALID(issues.join('; '))
  return Object.assign(err, { issues })
}

module.exports = { loadSettings, describeEndpoints }
