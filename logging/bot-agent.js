'use strict'

const { isbot } = require('isbot')

/**
 * Whether a request's user agent is a known bot, crawler, headless browser or HTTP library:
 * isbot's pattern (a maintained list, https://github.com/omrilotan/isbot), plus a request with no
 * user agent at all, which no browser sends. An access entry carries the answer (`bot`), so
 * rollups and counts split people from bots (docs/access-log.md, "Bots").
 *
 * isbot's one regular expression is costly per call (docs/access-log.md, "Bots"); most traffic
 * shares a few user agents, so answers are remembered, in a table that starts over when full (a flood of random
 * agents costs each its one match, no memory beyond the bound).
 */

// At most this many agents of at most MAX_HEADER_CHARS (access-entry.js): a few MiB at worst.
const MAX_REMEMBERED = 2000
/** @type {Map<string, boolean>} */
const remembered = new Map()

/**
 * @param {unknown} ua the User-Agent header as sent
 * @returns {boolean}
 */
function isBotAgent (ua) {
  if (typeof ua !== 'string' || ua.length === 0) return true
  let bot = remembered.get(ua)
  if (bot !== undefined) return bot
  bot = isbot(ua)
  if (remembered.size >= MAX_REMEMBERED) remembered.clear()
  remembered.set(ua, bot)
  return bot
}

module.exports = { isBotAgent }
