'use strict'

const { NAME_RE } = require('../../../lib/names')
const { streamToken } = require('./stream-token')

/**
 * The `eventStreams` member of a bulk answer: where the client hears of changes to its id.
 *
 *   [{"type":"sse","endpoint":{"requestUri":"/api/sample5/changes?id=7"},"inactivityDelaySec":120}]
 *
 * OFREP's `endpoint` form, not `url`: the provider joins `requestUri` to the origin of the
 * baseUrl it was configured with, so the stream is reached the way the evaluation was (through
 * the same proxy or load balancer), and beacon never writes a URL built from the request's Host
 * header, which the client controls. A keyed endpoint's URI also carries the stream token
 * (api/public/ofrep/stream-token.js), signed with the key the request presented.
 *
 * One stream per id, not per endpoint: a change wakes the watchers of its id only, so the
 * refetches it causes are those of the clients it concerns, not of every client of the endpoint.
 */

/**
 * @param {{ name: string, stream: { path: string, inactivityDelaySec: number }|null }} route
 * @param {string} id a validated id (letters, digits, `_`, `-`): written unescaped
 * @param {string|null} key the API key the request was authorised with; null: the endpoint has none
 * @returns {string|null} the JSON of the array; null when the endpoint has no change stream
 */
function eventStreamsJson (route, id, key) {
  if (route.stream === null) return null
  if (!NAME_RE.test(id)) throw new TypeError('eventStreamsJson: id was not validated')
  let uri = route.stream.path + '?id=' + id
  if (key !== null) uri += '&token=' + streamToken(key, route.name, id)
  return '[{"type":"sse","endpoint":{"requestUri":"' + uri + '"},"inactivityDelaySec":' +
    route.stream.inactivityDelaySec + '}]'
}

module.exports = { eventStreamsJson }
