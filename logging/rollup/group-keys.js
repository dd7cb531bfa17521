'use strict'

const { rollupGroupOf, parseGroup, qualifierOf } = require('./layout')

/**
 * What the rollup job counts a raw access-log row under, read from the row's bytes, and those
 * counts as rollup groups (layout.js rollupGroupOf). The job reads every row written, so a row
 * costs one short string and a map update: a key is the entry's head as it is, turned into its
 * group once per key, not once per row (docs/access-log.md, "Rollups", has the figures).
 */

const UNREADABLE = JSON.stringify(['', '', 'unreadable'])
// How every access entry begins (logging/access-entry.js: same keys, same order; endpoint, id and
// variant are safe names, lib/names.js, so no escapes); an event's has `"event":"<name>"` where
// the status is. Read within the first 200 bytes, which hold it with room to spare.
const HEAD_BYTES = 200
/** @param {string} text */
const bytes = (text) => Uint8Array.from(Buffer.from(text, 'latin1'))
const TS = bytes('{"ts":')
const ENDPOINT = bytes(',"endpoint":"')
const ID = bytes('","id":')
const NULL = bytes('null')
const BOT_TRUE = bytes(',"bot":true')
const BOT_FALSE = bytes(',"bot":false')
const VARIANT = bytes(',"variant":')
const STATUS = bytes(',"status":')
const EVENT = bytes(',"event":"')
const QUOTE = 0x22
const COMMA = 0x2c
const OPEN_BRACKET = 0x5b
const CLOSE_BRACE = 0x7d
/** [A-Za-z0-9_-]: the bytes of a safe name */
const NAME_BYTE = new Uint8Array(256)
for (const c of Buffer.from('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-', 'latin1')) {
  NAME_BYTE[c] = 1
}
/** @param {number} c */
const isDigit = (c) => c >= 0x30 && c <= 0x39

/**
 * @param {Uint8Array} value @param {number} at @param {Uint8Array} text @param {number} end
 * @returns {number} the index after `text` when it is at `at` (and ends before `end`), else -1
 */
function matchAt (value, at, text, end) {
  if (at < 0 || at + text.length > end) return -1
  for (let i = 0; i < text.length; i++) if (value[at + i] !== text[i]) return -1
  return at + text.length
}

/**
 * @param {Uint8Array} value @param {number} at @param {number} end
 * @returns {number} the index after the name bytes from `at`
 */
function skipName (value, at, end) {
  while (at < end && NAME_BYTE[value[at]] === 1) at++
  return at
}

/**
 * @param {Uint8Array} value @param {number} at the first byte of a quoted name @param {number} end
 * @returns {number} the index after its closing quote, else -1
 */
function closeName (value, at, end) {
  const p = skipName(value, at, end)
  return p < end && value[p] === QUOTE ? p + 1 : -1
}

/**
 * @param {Uint8Array} value @param {number} at @param {number} end
 * @returns {boolean} `,"variant":"` is at `at`: an event of the old order that names a variant
 */
function isQuotedVariant (value, at, end) {
  const p = matchAt(value, at, VARIANT, end)
  return p >= 0 && p < end && value[p] === QUOTE
}

/**
 * The key a raw row is counted under. An access entry or an event written by beacon: its head
 * from the endpoint on, as it is, a 3-digit status cut to its first digit, its class (another
 * status whole, with its comma)
 * (`sample5","id":"42","bot":false,"variant":"B","status":2`; an event's without its name,
 * `sample5","id":null,"bot":false,"variant":null,"event":"`), read from the bytes with no string
 * made but this one. Anything else: its rollupGroupOf() qualifier, from the whole value parsed (a
 * qualifier starts with `[`, a head never does). A value taken by its head must also end like a
 * JSON object. Several keys may be one group (id null or "", statuses of 1 or 4 digits, entries
 * from before bots or variants were recorded): groupOfKey() says which. An event from before
 * variants came first has its variant after its name: taken by its head only when it has none.
 * @param {Buffer|undefined} value the row's cell
 * @returns {string}
 */
function groupKeyOfValue (value) {
  if (!value || value.length === 0) return UNREADABLE
  const end = Math.min(value.length, HEAD_BYTES)
  if (value[value.length - 1] === CLOSE_BRACE) {
    let at = matchAt(value, 0, TS, end)
    const digits = at
    while (at >= 0 && at < end && isDigit(value[at])) at++
    at = at > digits ? matchAt(value, at, ENDPOINT, end) : -1
    const start = at
    if (at >= 0) at = matchAt(value, skipName(value, at, end), ID, end)
    if (at >= 0 && at < end && value[at] === QUOTE) {
      at = skipName(value, at + 1, end)
      at = at < end && value[at] === QUOTE ? at + 1 : -1
    } else {
      at = matchAt(value, at, NULL, end)
    }
    // An entry written before bots were told apart has no `bot`: it counts as a person's.
    const bot = matchAt(value, at, BOT_TRUE, end)
    at = bot >= 0 ? bot : Math.max(at, matchAt(value, at, BOT_FALSE, end))
    const variant = matchAt(value, at, VARIANT, end)
    if (variant >= 0) {
      at = variant < end && value[variant] === QUOTE ? closeName(value, variant + 1, end) : matchAt(value, variant, NULL, end)
    }
    const status = matchAt(value, at, STATUS, end)
    if (status >= 0) {
      let p = status
      while (p < end && isDigit(value[p])) p++
      // A status of other than 3 digits keeps them all, and its comma: told from a class digit.
      if (p > status && p < end && value[p] === COMMA) {
        return value.toString('latin1', start, p - status === 3 ? status + 1 : p + 1)
      }
    }
    const event = matchAt(value, at, EVENT, end)
    if (event >= 0) {
      const p = skipName(value, event, end)
      const ends = p + 1 < end && value[p] === QUOTE && (value[p + 1] === COMMA || value[p + 1] === CLOSE_BRACE)
      if (ends && (variant >= 0 || !isQuotedVariant(value, p + 1, end))) {
        return value.toString('latin1', start, event) // the name left out: every event is one class
      }
    }
  }
  try {
    const entry = JSON.parse(value.toString('utf8'))
    return entry !== null && typeof entry === 'object' ? rollupGroupOf(entry) : UNREADABLE
  } catch {
    return UNREADABLE
  }
}

/**
 * A key's group, and whether the key is plain: a head whose id is null or not empty, with a
 * `bot` and a `variant`, and whose status had 3 digits (or an event's), which no other plain key
 * shares its group with.
 * @param {string} key a groupKeyOfValue() key
 * @returns {{ endpoint: string, id: string, class: string, bot: boolean, variant: string|null, plain: boolean }}
 */
function groupOfKey (key) {
  if (key.charCodeAt(0) === OPEN_BRACKET) return { ...parseGroup(key), plain: false }
  // <endpoint>","id":("<id>"|null)[,"bot":(true|false)][,"variant":("<name>"|null)],
  //   ("status":<digits>|"event":")
  const endpoint = key.slice(0, key.indexOf('"'))
  let at = endpoint.length + 7
  let id = ''
  if (key.charCodeAt(at) === QUOTE) {
    const close = key.indexOf('"', at + 1)
    id = key.slice(at + 1, close)
    at = close + 1
  } else {
    at += 4
  }
  let plain = id !== '' || key.charCodeAt(at - 1) === 0x6c // 'l': null
  const bot = key.startsWith(',"bot":true', at)
  if (bot) at += 11
  else if (key.startsWith(',"bot":false', at)) at += 12
  else plain = false // no `bot`: shares the people's group with `"bot":false`
  /** @type {string|null} */
  let variant = null
  if (!key.startsWith(',"variant":', at)) {
    plain = false // no `variant`: shares its group with `"variant":null`
  } else if (key.charCodeAt(at + 11) === QUOTE) {
    const close = key.indexOf('"', at + 12)
    variant = key.slice(at + 12, close)
    at = close + 1
  } else {
    at += 15
  }
  if (!key.startsWith(',"status":', at)) return { endpoint, id, class: 'event', bot, variant, plain }
  const digits = key.slice(at + 10)
  if (!digits.endsWith(',')) return { endpoint, id, class: `${digits}xx`, bot, variant, plain } // a 3-digit status's class
  return { endpoint, id, class: `${Math.floor(Number(digits.slice(0, -1)) / 100)}xx`, bot, variant, plain: false }
}

/**
 * The qualifiers of a group, counts and totals (layout.js qualifierOf, totalsOf):
 * [endpoint, id, class] and [endpoint, "*", class], with "bot" after them for a bot's, or
 * "human" or "bot" and the variant when there is one; a head's names are safe, so they need no
 * escapes.
 * @param {{ endpoint: string, id: string, class: string, bot?: boolean, variant?: string|null }} group
 * @param {boolean} safe its names come from a head
 * @returns {[string, string]}
 */
function qualifiersOf ({ endpoint, id, class: cls, bot, variant = null }, safe) {
  if (!safe) {
    return [qualifierOf(endpoint, id, cls, bot === true, variant), qualifierOf(endpoint, '*', cls, bot === true, variant)]
  }
  const tail = variant !== null
    ? (bot === true ? '","bot","' : '","human","') + variant + '"]'
    : bot === true ? '","bot"]' : '"]'
  return [`["${endpoint}","${id}","${cls}${tail}`, `["${endpoint}","*","${cls}${tail}`]
}

/**
 * Counts by key as counts by group and totals over ids (layout.js totalsOf), keys of one group
 * added up.
 * @param {Map<string, number>} keys groupKeyOfValue() key → rows
 * @returns {{ groups: Map<string, number>, totals: Map<string, number> }} qualifier → rows
 */
function groupsOfKeys (keys) {
  const groups = new Map()
  const totals = new Map()
  for (const [key, n] of keys) {
    const [group, total] = qualifiersOf(groupOfKey(key), key.charCodeAt(0) !== OPEN_BRACKET)
    groups.set(group, (groups.get(group) || 0) + n)
    totals.set(total, (totals.get(total) || 0) + n)
  }
  return { groups, totals }
}

/**
 * The same as lists, what the rollup job writes: the plain keys' groups straight (no two plain
 * keys share one), the few others added up with those of their group, by a lookup made only when
 * there are such keys.
 * @param {Map<string, number>} keys
 * @returns {{ groups: Array<[string, number]>, totals: Map<string, number> }}
 */
function countsOfKeys (keys) {
  /** @type {Array<[string, number]>} */
  const groups = []
  const totals = new Map()
  /** @type {Map<string, number>|null} */
  let others = null
  for (const [key, n] of keys) {
    const group = groupOfKey(key)
    const [qualifier, total] = qualifiersOf(group, key.charCodeAt(0) !== OPEN_BRACKET)
    totals.set(total, (totals.get(total) || 0) + n)
    if (group.plain) {
      groups.push([qualifier, n])
    } else {
      others ??= new Map()
      others.set(qualifier, (others.get(qualifier) || 0) + n)
    }
  }
  if (others) {
    const at = new Map(groups.map(([qualifier], i) => [qualifier, i]))
    for (const [qualifier, n] of others) {
      const i = at.get(qualifier)
      if (i === undefined) groups.push([qualifier, n])
      else groups[i][1] += n
    }
  }
  return { groups, totals }
}

module.exports = { groupKeyOfValue, groupOfKey, groupsOfKeys, countsOfKeys, qualifiersOf, OPEN_BRACKET, UNREADABLE }
