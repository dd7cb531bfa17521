'use strict'

// The OFREP 0.3.0 response shapes (open-feature/protocol service/openapi.yaml @ d1a63a4e,
// components.schemas), transcribed for ajv, so unit tests can hold beacon's answers to them.
//
// Two departures, both where the text cannot mean what JSON Schema would make of it:
// - evaluationSuccess's value shapes are a `oneOf` in the spec, but an integer is also a
//   number (integerFlag and floatFlag both match) and codeDefaultFlag (`properties: {}`)
//   matches every object, so under oneOf no response would ever be valid. Here they are an
//   anyOf, and codeDefaultFlag is what its description says: an item without `value`.
// - `example`/`description` keywords are left out (ajv's strict mode refuses unknown keywords),
//   and so is `format: uri` (no ajv-formats here).

const Ajv = require('ajv')

const REASONS_0_3_0 = Object.freeze(['STATIC', 'TARGETING_MATCH', 'SPLIT', 'DISABLED', 'UNKNOWN'])
const FAILURE_CODES_0_3_0 = Object.freeze(['PARSE_ERROR', 'TARGETING_KEY_MISSING', 'INVALID_CONTEXT', 'GENERAL'])

const key = { type: 'string' }
const errorDetails = { type: 'string' }
const metadata = {
  type: 'object',
  additionalProperties: { oneOf: [{ type: 'boolean' }, { type: 'string' }, { type: 'number' }] }
}
const valued = (value) => ({ type: 'object', properties: { value }, required: ['value'] })

/** @param {string[]} reasons */
function evaluationSuccess (reasons) {
  return {
    type: 'object',
    required: ['key', 'reason'],
    properties: { key, reason: { type: 'string', enum: reasons }, variant: { type: 'string' }, metadata },
    anyOf: [
      valued({ type: 'boolean' }), // booleanFlag
      valued({ type: 'string' }), // stringFlag
      valued({ type: 'integer' }), // integerFlag
      valued({ type: 'number' }), // floatFlag
      valued({ type: 'object', additionalProperties: true }), // objectFlag
      { type: 'object', not: { required: ['value'] } } // codeDefaultFlag
    ]
  }
}

const evaluationFailure = {
  type: 'object',
  required: ['key', 'errorCode'],
  properties: { key, errorCode: { type: 'string', enum: FAILURE_CODES_0_3_0 }, errorDetails, metadata }
}

const flagNotFound = {
  type: 'object',
  required: ['key', 'errorCode'],
  properties: { key, errorCode: { type: 'string', enum: ['FLAG_NOT_FOUND'] }, errorDetails, metadata }
}

// eventStream: `type`, and exactly one of `url` or `endpoint` (whose requestUri is a path).
const eventStream = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { type: 'string' },
    url: { type: 'string' },
    endpoint: {
      type: 'object',
      required: ['requestUri'],
      properties: { origin: { type: 'string' }, requestUri: { type: 'string', pattern: '^/' } }
    },
    inactivityDelaySec: { type: 'integer', minimum: 1 }
  },
  oneOf: [{ required: ['url'] }, { required: ['endpoint'] }]
}

// The JSON in an SSE event's `data` (sseEventData).
const sseEventData = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { type: 'string' },
    etag: { type: 'string' },
    lastModified: { oneOf: [{ type: 'integer', minimum: 0 }, { type: 'string' }] }
  }
}

/** @param {string[]} reasons */
function bulkEvaluationSuccess (reasons) {
  return {
    type: 'object',
    required: ['flags'],
    properties: {
      flags: { type: 'array', items: { oneOf: [evaluationSuccess(reasons), evaluationFailure] } },
      metadata,
      eventStreams: { type: 'array', items: eventStream }
    }
  }
}

const bulkEvaluationFailure = {
  type: 'object',
  required: ['errorCode'],
  properties: { errorCode: { type: 'string' }, errorDetails }
}

const generalErrorResponse = { type: 'object', properties: { errorDetails } }

/**
 * Compiled validators of the 0.3.0 shapes. Each returns null when the value fits, else ajv's
 * errors (readable in a failed expect).
 */
function ofrepValidators () {
  const ajv = new Ajv({ allErrors: true })
  const reasons = [...REASONS_0_3_0]
  const compiled = {
    evaluationSuccess: ajv.compile(evaluationSuccess(reasons)),
    evaluationFailure: ajv.compile(evaluationFailure),
    flagNotFound: ajv.compile(flagNotFound),
    bulkEvaluationSuccess: ajv.compile(bulkEvaluationSuccess(reasons)),
    bulkEvaluationFailure: ajv.compile(bulkEvaluationFailure),
    generalErrorResponse: ajv.compile(generalErrorResponse),
    eventStream: ajv.compile(eventStream),
    sseEventData: ajv.compile(sseEventData)
  }
  return Object.fromEntries(Object.entries(compiled).map(([name, validate]) => [
    name,
    (value) => (validate(value) ? null : validate.errors)
  ]))
}

module.exports = { ofrepValidators, REASONS_0_3_0, FAILURE_CODES_0_3_0 }
