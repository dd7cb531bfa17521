'use strict'

const { filters: F } = require('@beacon/hbase-client')
const { ACCESS_LOG_FAMILY, ACCESS_LOG_QUALIFIER } = require('../access-log-layout')

const COLUMN = `${ACCESS_LOG_FAMILY}:${ACCESS_LOG_QUALIFIER}`

/**
 * @typedef {{ endpoint?: string, id?: string, status?: number }} LogFilters
 * @typedef {{ filter: import('@beacon/hbase-client').Filter|null,
 *   test: (entry: Record<string, unknown>|null) => boolean, any: boolean }} LogMatch
 */

/**
 * The filters of a query, twice: as a server-side HBase filter that narrows (rows that cannot
 * match never leave the RegionServer), and as the exact test each row that comes back must
 * pass in Node.
 *
 * The value is the entry's JSON text (logging/access-entry.js), so a field is matched as its
 * JSON key and value: `"id":"4"` (the closing quote keeps id 42 out) and `"status":200` followed
 * by a non-digit (a regex, so 200 keeps 2000 out). Inside a JSON string a quote is always
 * escaped, so a user agent holding `"id":"4"` never matches. Still only a narrowing: HBase's
 * substring comparator ignores case (id `ab` lets `AB` through), and an entry written by another
 * serializer may space its JSON differently; the test in Node on the parsed entry decides.
 * Names (endpoints, ids) hold only [A-Za-z0-9_-] (lib/names.js), so they need no escaping in
 * JSON or in a Java regex.
 * @param {LogFilters} filters
 * @returns {LogMatch}
 */
function logMatch ({ endpoint, id, status }) {
  const server = []
  /** @type {Array<[string, unknown]>} */
  const exact = []
  if (endpoint !== undefined) {
    server.push(F.singleColumnValueFilter(COLUMN, 'EQUAL', F.substring(`"endpoint":${JSON.stringify(endpoint)}`)))
    exact.push(['endpoint', endpoint])
  }
  if (id !== undefined) {
    server.push(F.singleColumnValueFilter(COLUMN, 'EQUAL', F.substring(`"id":${JSON.stringify(id)}`)))
    exact.push(['id', id])
  }
  if (status !== undefined) {
    server.push(F.singleColumnValueFilter(COLUMN, 'EQUAL', F.regex(`"status":${status}(?![0-9])`)))
    exact.push(['status', status])
  }
  return {
    filter: server.length === 0 ? null : server.length === 1 ? server[0] : F.allOf(...server),
    any: exact.length === 0,
    test (entry) {
      if (exact.length === 0) return true
      if (entry === null) return false
      for (const [key, value] of exact) if (entry[key] !== value) return false
      return true
    }
  }
}

module.exports = { logMatch, COLUMN }
