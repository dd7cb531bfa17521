'use strict'

// The hash secret's get-or-create (lib/toggles/hash-secret.js) against a stand-in store whose
// check-and-put is first-writer-wins like HBase's (the real one: hash-secret.test.js), and the
// loader's retries on a fake clock.

const { createHashSecretSource, loadHashSecret, SECRET_BYTES } = require('../../../lib/toggles/hash-secret')

/** A config table row with HBase's check-and-put semantics; `lostAnswers` makes it apply a write and say false. */
function fakeStore ({ lostAnswers = 0, failReads = 0 } = {}) {
  const calls = { reads: 0, creates: 0 }
  let stored = null
  return {
    calls,
    set: (value) => { stored = value },
    async readHashSecret () {
      calls.reads++
      if (failReads-- > 0) throw Object.assign(new Error('HBase unreachable'), { code: 'HBASE_TIMEOUT' })
      return stored
    },
    async createHashSecret (secret) {
      calls.creates++
      if (stored !== null) return false
      stored = secret
      // A retried call whose first attempt landed: the write is there, the answer says false.
      return !(lostAnswers-- > 0)
    }
  }
}

const random = (fill) => () => Buffer.alloc(SECRET_BYTES, fill)

test('a stored secret is read as it is; nothing is written', async () => {
  const store = fakeStore()
  store.set(Buffer.alloc(32, 9))
  expect(await createHashSecretSource({ store, randomBytes: random(1) }).read()).toEqual(Buffer.alloc(32, 9))
  expect(store.calls).toEqual({ reads: 1, creates: 0 })
})

test('none stored: 32 random bytes are stored if still absent, then read back', async () => {
  const store = fakeStore()
  const secret = await createHashSecretSource({ store }).read()
  expect(secret).toHaveLength(32)
  expect(store.calls).toEqual({ reads: 2, creates: 1 })
  expect(await createHashSecretSource({ store }).read()).toEqual(secret)
})

test('hosts starting together all end with the first writer\'s secret', async () => {
  const store = fakeStore()
  const hosts = [1, 2, 3, 4].map((n) => createHashSecretSource({ store, randomBytes: random(n) }))
  const secrets = await Promise.all(hosts.map((h) => h.read()))
  expect(secrets.map((s) => s[0])).toEqual([1, 1, 1, 1])
})

test('a check-and-put that landed but answered false still ends with that secret (read back)', async () => {
  const store = fakeStore({ lostAnswers: 1 })
  expect(await createHashSecretSource({ store, randomBytes: random(5) }).read()).toEqual(Buffer.alloc(32, 5))
})

test('a stored value of another length is refused, naming the length only', async () => {
  const store = fakeStore()
  store.set(Buffer.from('short secret'))
  const err = await createHashSecretSource({ store }).read().catch((e) => e)
  expect(err.code).toBe('INTERNAL')
  expect(err.message).toMatch(/is 12 bytes, not 32 bytes/)
  expect(err.message).not.toContain('short secret')
})

describe('loadHashSecret', () => {
  beforeEach(() => jest.useFakeTimers())
  afterEach(() => jest.useRealTimers())

  function logger () {
    const lines = []
    return { lines, warn: (obj, msg) => lines.push(['warn', obj, msg]), info: (msg) => lines.push(['info', msg]) }
  }

  test('read at once: ready resolves after onSecret got it', async () => {
    const store = fakeStore()
    store.set(Buffer.alloc(32, 3))
    const got = []
    const loading = loadHashSecret({ source: createHashSecretSource({ store }), onSecret: (s) => got.push(s) })
    await loading.ready
    expect(got).toEqual([Buffer.alloc(32, 3)])
    loading.stop()
  })

  test('HBase unreachable at start: ready resolves anyway, retried until read; logged once each way, never the secret', async () => {
    const store = fakeStore({ failReads: 3 })
    store.set(Buffer.alloc(32, 4))
    const log = logger()
    const got = []
    const source = createHashSecretSource({ store })
    const loading = loadHashSecret({ source, onSecret: (s) => got.push(s), retryMs: 1000, logger: log })
    await loading.ready
    expect(got).toEqual([])
    for (let i = 0; i < 3; i++) await jest.advanceTimersByTimeAsync(1000)
    expect(got).toEqual([Buffer.alloc(32, 4)])
    expect(store.calls.reads).toBe(4)
    expect(log.lines.map((l) => l[0])).toEqual(['warn', 'info'])
    expect(JSON.stringify(log.lines)).not.toContain(Buffer.alloc(32, 4).toString('hex'))
    await jest.advanceTimersByTimeAsync(10000)
    expect(store.calls.reads).toBe(4) // read once: no more polling
  })

  test('stop() ends the retries', async () => {
    const store = fakeStore({ failReads: 100 })
    const loading = loadHashSecret({ source: createHashSecretSource({ store }), onSecret: () => {}, retryMs: 1000 })
    await loading.ready
    loading.stop()
    await jest.advanceTimersByTimeAsync(5000)
    expect(store.calls.reads).toBe(1)
  })
})
