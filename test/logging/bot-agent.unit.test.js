'use strict'

// Bots told apart from people (logging/bot-agent.js, isbot's pattern): crawlers, headless
// browsers, HTTP libraries and a missing user agent are bots; browsers are people; the entry
// says which before any sink's privacy drops the agent; a remembered answer is the same answer.

const { isBotAgent } = require('../../logging/bot-agent')
const { accessEntry, eventEntry } = require('../../logging/access-entry')
const { createPrivacyPolicy } = require('../../logging/privacy')

const BROWSERS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
  'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1'
]
const BOTS = [
  'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)',
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36',
  'curl/8.5.0',
  'python-requests/2.32.3',
  'Go-http-client/1.1',
  'undici'
]

test('crawlers, headless browsers, HTTP libraries and no agent at all are bots; browsers are people', () => {
  expect(BROWSERS.filter(isBotAgent)).toEqual([])
  expect(BOTS.filter((ua) => !isBotAgent(ua))).toEqual([])
  for (const none of [undefined, null, '']) expect(isBotAgent(none)).toBe(true)
  // Asked again (remembered): the same answers.
  expect([...BROWSERS, ...BOTS].map(isBotAgent)).toEqual([...BROWSERS.map(() => false), ...BOTS.map(() => true)])
})

test('many distinct agents: every answer is still the pattern\'s', () => {
  const agents = Array.from({ length: 5000 }, (_, i) => (i % 2 ? `${BROWSERS[0]} r${i}` : `crawler-${i}/1.0 (+https://example.test/bot)`))
  expect(agents.map(isBotAgent)).toEqual(agents.map((_, i) => i % 2 === 0))
})

test('an entry and an event entry say whether a bot sent them, even for a sink that keeps no agent', () => {
  const view = accessEntry({ ts: 1, endpoint: 'sample5', id: '1', status: 200, ms: 1, ip: '10.0.0.1', ua: BOTS[0], ref: null })
  const event = eventEntry({ ts: 1, endpoint: 'sample5', id: '1', event: 'exposure', ip: '10.0.0.1', ua: BROWSERS[0], ref: null })
  expect([view.bot, event.bot]).toEqual([true, false])
  const policy = createPrivacyPolicy({ ip: 'drop', userAgent: 'drop', honorOptOut: false })
  const stored = policy.apply(view, false)
  expect([stored.ua, stored.bot]).toEqual([null, true])
})
