'use strict'

// A retention set through one worker reaches its peers at once: the admin route spreads a
// `retention` change on the host (api/propagation.js), and each process drops the TTLs it read
// (logging/retention.js forget()), so that a count's horizon note follows the new TTL. The real
// two-worker path runs in test/docs/examples.test.js (a count right after `log retention --set`).

const { createPropagation } = require('../../api/propagation')
const { createRetention } = require('../../logging/retention')
const { ACCESS_LOG_FAMILY } = require('../../logging/access-log-layout')

const logger = { info () {}, warn () {}, error () {} }

test('a retention change goes to every process of the host, and each forgets the TTLs it read', () => {
  const sent = []
  let forgotten = 0
  const propagation = createPropagation({
    endpoints: new Map(),
    store: /** @type {any} */ ({}),
    broadcast: (change) => sent.push(change),
    controlPollMs: 0,
    logger: /** @type {any} */ (logger),
    onRetentionChange: () => forgotten++
  })
  propagation.retentionChanged()
  expect(sent).toEqual([{ cmd: 'retention' }])
  expect(forgotten).toBe(0) // the broadcast brings it back to this process too
  propagation.applyChange(sent[0])
  expect(forgotten).toBe(1)
})

test('after forget(), the TTLs are read again at once rather than after their minute', async () => {
  let ttl = null
  let reads = 0
  const client = {
    admin: {
      familyTtls: async () => {
        reads++
        return { [ACCESS_LOG_FAMILY]: ttl }
      }
    }
  }
  let now = 0
  const retention = createRetention({
    client: /** @type {any} */ (client), logTable: 't', rollupTable: null, configured: { retention: '90d' }, now: () => now
  })
  expect((await retention.current()).log).toBeNull()
  ttl = 90 * 86400 // set by another process
  now = 1000
  expect((await retention.current()).log).toBeNull() // still the minute-old read
  retention.forget()
  expect((await retention.current()).log).toBe(90 * 86400)
  expect(reads).toBe(2)
})
