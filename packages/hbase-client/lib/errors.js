'use strict'

/**
 * Typed errors of the HBase client. Every error has a stable `code`; `retryable` says whether the
 * client may try the operation again, `relocate` whether the cached region location should be
 * dropped first. Remote errors keep the server's exception class in `remoteClass`.
 */
class HBaseError extends Error {
  /**
   * @param {string} code stable code, one of CODES
   * @param {string} message
   * @param {{ retryable?: boolean, relocate?: boolean, remoteClass?: string, cause?: Error, server?: string,
   *   serverOverloaded?: boolean }} [details]
   */
  constructor (code, message, details = {}) {
    super(message, details.cause ? { cause: details.cause } : undefined)
    this.name = 'HBaseError'
    this.code = code
    this.retryable = details.retryable === true
    this.relocate = details.relocate === true
    this.serverOverloaded = details.serverOverloaded === true
    if (details.remoteClass) this.remoteClass = details.remoteClass
    if (details.server) this.server = details.server
  }
}

/** Stable error codes, with what each means (README.md documents the same table). */
const CODES = Object.freeze({
  HBASE_BAD_ARGUMENT: 'a call was made with invalid arguments',
  HBASE_CLIENT_CLOSED: 'the client was closed',
  HBASE_CONNECTION: 'could not connect to a server, or the connection was lost',
  HBASE_CALL_TIMEOUT: 'one RPC got no answer within rpcTimeout',
  HBASE_TIMEOUT: 'the operation did not succeed within its deadline (retries included)',
  HBASE_META_UNAVAILABLE: 'no bootstrap server could tell where hbase:meta is',
  HBASE_TABLE_NOT_FOUND: 'the table does not exist',
  HBASE_TABLE_EXISTS: 'the table already exists',
  HBASE_NO_SUCH_FAMILY: 'the column family does not exist in the table',
  HBASE_REGION_UNAVAILABLE: 'the region is moving, splitting, opening or not served here',
  HBASE_SERVER_BUSY: 'the server asked the client to back off',
  HBASE_SCANNER_EXPIRED: 'the server-side scanner is gone; the scan restarts from the last row',
  HBASE_PROCEDURE_FAILED: 'a master procedure (create/delete table, split, merge) failed',
  HBASE_PROTOCOL: 'the server sent something this client cannot decode',
  HBASE_REMOTE: 'the server raised an exception this client does not retry'
})

// Server exception simple class name → how the client reacts.
/** @type {Record<string, { code: string, retryable: boolean, relocate?: boolean }>} */
const REMOTE = {
  NotServingRegionException: { code: 'HBASE_REGION_UNAVAILABLE', retryable: true, relocate: true },
  RegionMovedException: { code: 'HBASE_REGION_UNAVAILABLE', retryable: true, relocate: true },
  RegionOpeningException: { code: 'HBASE_REGION_UNAVAILABLE', retryable: true, relocate: false },
  RegionServerStoppedException: { code: 'HBASE_REGION_UNAVAILABLE', retryable: true, relocate: true },
  RegionServerAbortedException: { code: 'HBASE_REGION_UNAVAILABLE', retryable: true, relocate: true },
  ServerNotRunningYetException: { code: 'HBASE_REGION_UNAVAILABLE', retryable: true, relocate: true },
  PleaseHoldException: { code: 'HBASE_SERVER_BUSY', retryable: true },
  RegionTooBusyException: { code: 'HBASE_SERVER_BUSY', retryable: true },
  CallQueueTooBigException: { code: 'HBASE_SERVER_BUSY', retryable: true },
  ServerTooBusyException: { code: 'HBASE_SERVER_BUSY', retryable: true },
  CallDroppedException: { code: 'HBASE_SERVER_BUSY', retryable: true },
  RetryImmediatelyException: { code: 'HBASE_SERVER_BUSY', retryable: true },
  MultiActionResultTooLarge: { code: 'HBASE_SERVER_BUSY', retryable: true },
  UnknownScannerException: { code: 'HBASE_SCANNER_EXPIRED', retryable: true },
  OutOfOrderScannerNextException: { code: 'HBASE_SCANNER_EXPIRED', retryable: true },
  ScannerResetException: { code: 'HBASE_SCANNER_EXPIRED', retryable: true },
  LeaseException: { code: 'HBASE_SCANNER_EXPIRED', retryable: true },
  TableNotFoundException: { code: 'HBASE_TABLE_NOT_FOUND', retryable: false },
  TableExistsException: { code: 'HBASE_TABLE_EXISTS', retryable: false },
  NoSuchColumnFamilyException: { code: 'HBASE_NO_SUCH_FAMILY', retryable: false }
}

/**
 * Builds the error for an exception the server reported (RPC header or per-action result).
 * @param {string} className fully qualified Java class name
 * @param {string} [detail] stack trace / message text from the server
 * @param {{ doNotRetry?: boolean, serverOverloaded?: boolean, server?: string }} [flags]
 * @returns {HBaseError}
 */
function remoteError (className, detail, flags = {}) {
  // split() returns at least one piece, so pop() has one to return.
  const simple = /** @type {string} */ (String(className || 'UnknownException').split('.').pop())
  const known = REMOTE[simple]
  const firstLine = detail ? String(detail).split('\n', 1)[0].slice(0, 500) : simple
  const retryable = known
    ? known.retryable
    : !flags.doNotRetry && !/DoNotRetry|UnknownProtocol|AccessDenied/.test(simple)
  return new HBaseError(known ? known.code : 'HBASE_REMOTE', `${simple}: ${firstLine}`, {
    retryable: flags.doNotRetry && !known ? false : retryable,
    relocate: known ? known.relocate === true : false,
    serverOverloaded: flags.serverOverloaded === true,
    remoteClass: className,
    server: flags.server
  })
}

/**
 * @param {string} message
 * @returns {HBaseError}
 */
function badArgument (message) {
  return new HBaseError('HBASE_BAD_ARGUMENT', message)
}

/**
 * The error of an operation refused or aborted because the client was closed or destroyed.
 * @param {Error} [cause] what the aborted operation saw last
 * @returns {HBaseError}
 */
function clientClosed (cause) {
  return new HBaseError('HBASE_CLIENT_CLOSED', 'the HBase client is closed', { cause })
}

// A failed write whose RPC may have reached the server and been applied: no answer in time, or
// the connection lost (or the client closed) with the call outstanding. A server's own refusal,
// a bad argument, or a connection that never opened (`unsent`) says it was not applied.
const OUTCOME_UNKNOWN = new Set(['HBASE_CALL_TIMEOUT', 'HBASE_TIMEOUT', 'HBASE_CONNECTION', 'HBASE_CLIENT_CLOSED'])

/**
 * Whether a write that failed with `err` may still have been applied by HBase (puts are
 * idempotent: writing it again is safe; counting it as lost may be wrong). A batch action's
 * final error says it for all its attempts (`outcomeUnknown`); any other error, for its own RPC.
 * @param {any} err
 * @returns {boolean}
 */
function mayHaveApplied (err) {
  if (!err) return false
  if (typeof err.outcomeUnknown === 'boolean') return err.outcomeUnknown
  return !err.unsent && !err.remoteClass && OUTCOME_UNKNOWN.has(err.code)
}

module.exports = { HBaseError, CODES, remoteError, badArgument, clientClosed, mayHaveApplied }
