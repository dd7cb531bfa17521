'use strict'

const { types } = require('./protocol')
const { badArgument } = require('./errors')
const { toBytes } = require('./cells')

/**
 * Server-side scan filters: builders for the filters and comparators HBase runs inside the
 * RegionServer, so rows that do not match never leave it. A filter travels as the Java class
 * name plus the protobuf of its own message (Filter.proto, Comparator.proto); this module
 * encodes them, and `client.scan(table, { filter })` sends one.
 *
 * HBase's semantics, kept as they are:
 * - a compare filter keeps a cell when `comparator(cellValue) <op> 0` holds, so EQUAL with a
 *   substring or regex comparator keeps the values that contain or match it;
 * - `substring` compares case-insensitively (HBase lower-cases both sides);
 * - `regex` is a Java regular expression searched anywhere in the value (`Matcher.find`),
 *   case-sensitive unless `caseInsensitive`.
 */

const PACKAGE = 'org.apache.hadoop.hbase.filter.'

/** The compare operators HBase offers (HBase.proto CompareType). */
const COMPARE_OPS = Object.freeze({
  LESS: 0,
  LESS_OR_EQUAL: 1,
  EQUAL: 2,
  NOT_EQUAL: 3,
  GREATER_OR_EQUAL: 4,
  GREATER: 5,
  NO_OP: 6
})

// java.util.regex.Pattern flags.
const CASE_INSENSITIVE = 0x02
const DOTALL = 0x20

/**
 * @typedef {{ name: string, serializedFilter: Buffer }} Filter a protobuf Filter, ready to send
 * @typedef {{ name: string, serializedComparator: Buffer }} Comparator a protobuf Comparator
 * @typedef {keyof typeof COMPARE_OPS} CompareOp
 */

/**
 * @param {string} type message name in hbase.proto
 * @param {object} message
 * @returns {Buffer}
 */
function encode (type, message) {
  const t = types[type]
  const problem = t.verify(message)
  if (problem) throw badArgument(`${type}: ${problem}`)
  const bytes = t.encode(message).finish()
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)
}

/** @param {string} type @param {object} message @returns {Filter} */
function filter (type, message) {
  return Object.freeze({ name: PACKAGE + type, serializedFilter: encode(type, message) })
}

/** @param {string} type @param {object} message @returns {Comparator} */
function comparator (type, message) {
  return Object.freeze({ name: PACKAGE + type, serializedComparator: encode(type, message) })
}

/**
 * @param {unknown} op
 * @returns {number}
 */
function compareOp (op) {
  if (typeof op !== 'string' || !Object.hasOwn(COMPARE_OPS, op)) {
    throw badArgument(`compare op must be one of ${Object.keys(COMPARE_OPS).join(', ')}`)
  }
  return COMPARE_OPS[/** @type {CompareOp} */ (op)]
}

/**
 * @param {unknown} value
 * @returns {asserts value is Comparator}
 */
function checkComparator (value) {
  const c = /** @type {any} */ (value)
  if (!c || typeof c.name !== 'string' || !Buffer.isBuffer(c.serializedComparator)) {
    throw badArgument('comparator must be one built by filters.js')
  }
}

/**
 * @param {unknown} value
 * @returns {asserts value is Filter}
 */
function checkFilter (value) {
  const f = /** @type {any} */ (value)
  if (!f || typeof f.name !== 'string' || !Buffer.isBuffer(f.serializedFilter)) {
    throw badArgument('filter must be one built by filters.js')
  }
}

/**
 * Matches values that contain `text`, ignoring case.
 * @param {string} text
 * @returns {Comparator}
 */
function substring (text) {
  if (typeof text !== 'string' || text === '') throw badArgument('substring needs a non-empty string')
  return comparator('SubstringComparator', { substr: text })
}

/**
 * Matches values in which the Java regular expression `pattern` finds a match.
 * @param {string} pattern
 * @param {{ caseInsensitive?: boolean, dotAll?: boolean }} [options]
 * @returns {Comparator}
 */
function regex (pattern, { caseInsensitive = false, dotAll = false } = {}) {
  if (typeof pattern !== 'string' || pattern === '') throw badArgument('regex needs a non-empty pattern')
  const patternFlags = (caseInsensitive ? CASE_INSENSITIVE : 0) | (dotAll ? DOTALL : 0)
  return comparator('RegexStringComparator', { pattern, patternFlags, charset: 'UTF-8', engine: 'JAVA' })
}

/**
 * Compares values with `bytes`, byte by byte (unsigned, lexicographic).
 * @param {import('./cells').Bytesish} bytes
 * @returns {Comparator}
 */
function binary (bytes) {
  return comparator('BinaryComparator', { comparable: { value: toBytes(bytes, 'binary comparator value') } })
}

/**
 * Compares the first `bytes.length` bytes of values with `bytes` (EQUAL: values that start with it).
 * @param {import('./cells').Bytesish} bytes
 * @returns {Comparator}
 */
function binaryPrefix (bytes) {
  return comparator('BinaryPrefixComparator', {
    comparable: { value: toBytes(bytes, 'binary prefix comparator value') }
  })
}

/**
 * Keeps the cells whose value passes `op` against `cmp` (rows left with no cell are dropped).
 * @param {CompareOp} op
 * @param {Comparator} cmp
 * @returns {Filter}
 */
function valueFilter (op, cmp) {
  checkComparator(cmp)
  return filter('ValueFilter', { compareFilter: { compareOp: compareOp(op), comparator: cmp } })
}

/**
 * Keeps whole rows by the value of one column. A row without the column is dropped unless
 * `filterIfMissing` is false.
 * @param {string} column "family:qualifier"
 * @param {CompareOp} op
 * @param {Comparator} cmp
 * @param {{ filterIfMissing?: boolean, latestVersionOnly?: boolean }} [options]
 * @returns {Filter}
 */
function singleColumnValueFilter (column, op, cmp, { filterIfMissing = true, latestVersionOnly = true } = {}) {
  const { family, qualifier } = splitColumn(column, 'singleColumnValueFilter')
  checkComparator(cmp)
  return filter('SingleColumnValueFilter', {
    columnFamily: family,
    columnQualifier: qualifier,
    compareOp: compareOp(op),
    comparator: cmp,
    filterIfMissing,
    latestVersionOnly
  })
}

/**
 * The condition of a check-and-put (HBase's Condition): the newest cell of `column` in `row`
 * holds exactly `value`; with `value` null, the cell is absent (HBase reads an empty expected
 * value as "absent or empty", so '' means the same).
 * @param {Buffer} row
 * @param {string} column "family:qualifier"
 * @param {import('./cells').Bytesish|null} value
 * @returns {object} protobuf Condition
 */
function cellCondition (row, column, value) {
  const { family, qualifier } = splitColumn(column, 'checkAndPut')
  const expected = value == null ? Buffer.alloc(0) : toBytes(value, 'checkAndPut expected value')
  return { row, family, qualifier, compareType: COMPARE_OPS.EQUAL, comparator: binary(expected) }
}

/**
 * @param {unknown} column "family:qualifier"
 * @param {string} who the caller, named in the error
 * @returns {{ family: Buffer, qualifier: Buffer }}
 */
function splitColumn (column, who) {
  const at = typeof column === 'string' ? column.indexOf(':') : -1
  if (at <= 0) throw badArgument(`${who} needs a column "family:qualifier"`)
  const name = /** @type {string} */ (column)
  return { family: Buffer.from(name.slice(0, at), 'utf8'), qualifier: Buffer.from(name.slice(at + 1), 'utf8') }
}

/**
 * @param {1|2} operator FilterList.Operator
 * @param {Filter[]} filters
 * @returns {Filter}
 */
function filterList (operator, filters) {
  if (!Array.isArray(filters) || filters.length === 0) throw badArgument('a filter list needs at least one filter')
  for (const f of filters) checkFilter(f)
  return filter('FilterList', { operator, filters })
}

/**
 * A row passes when it passes every filter (FilterList MUST_PASS_ALL).
 * @param {...Filter} filters
 * @returns {Filter}
 */
function allOf (...filters) {
  return filterList(1, filters)
}

/**
 * A row passes when it passes any of the filters (FilterList MUST_PASS_ONE).
 * @param {...Filter} filters
 * @returns {Filter}
 */
function anyOf (...filters) {
  return filterList(2, filters)
}

/**
 * Only the first cell of each row.
 * @returns {Filter}
 */
function firstKeyOnly () {
  return filter('FirstKeyOnlyFilter', {})
}

/**
 * Cells without their values (an empty value each).
 * @returns {Filter}
 */
function keyOnly () {
  return filter('KeyOnlyFilter', { lenAsVal: false })
}

/**
 * Only the cells whose qualifier starts with one of these prefixes (HBase's
 * MultipleColumnPrefixFilter): what a read of some of a wide row's columns needs when their
 * full names are not known.
 * @param {Array<string|Buffer>} prefixes at least one
 * @returns {Filter}
 */
function columnPrefixes (prefixes) {
  if (!Array.isArray(prefixes) || prefixes.length === 0) throw badArgument('columnPrefixes takes at least one prefix')
  const sorted = prefixes.map((p) => toBytes(p)).sort(Buffer.compare)
  return filter('MultipleColumnPrefixFilter', { sortedPrefixes: sorted })
}

module.exports = {
  COMPARE_OPS,
  substring,
  regex,
  binary,
  binaryPrefix,
  valueFilter,
  singleColumnValueFilter,
  allOf,
  anyOf,
  firstKeyOnly,
  keyOnly,
  columnPrefixes,
  checkFilter,
  cellCondition
}
