'use strict'

// The text of an environment variable, as the settings' value it stands for.

/** @type {Record<string, boolean>} */
const BOOLEANS = { 1: true, true: true, yes: true, 0: false, false: false, no: false }
const BOOLEAN_TEXT = 'must be 1, 0, true, false, yes or no'

/** @param {string} raw @param {string} kind @returns {unknown} */
function parseEnv (raw, kind) {
  if (kind === 'bool') return BOOLEANS[raw.trim().toLowerCase()] ?? raw
  if (kind === 'int') return /^-?[0-9]+$/.test(raw.trim()) ? Number(raw.trim()) : raw
  if (kind === 'list') return raw.split(',').map((s) => s.trim()).filter(Boolean)
  // <per second>[:<burst>] (0 = off); anything else goes on as text, for validation to name
  const rate = kind === 'rate' && /^\s*([0-9]+)(?::([0-9]+))?\s*$/.exec(raw)
  if (rate) return { perSecond: Number(rate[1]), burst: rate[2] === undefined ? 0 : Number(rate[2]) }
  return raw
}

module.exports = { parseEnv, BOOLEAN_TEXT }
