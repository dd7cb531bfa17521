'use strict'

// The released OpenFeature server SDK with its OFREP provider (@openfeature/server-sdk,
// @openfeature/ofrep-provider, both from the npm registry) against a real beacon built through
// the root factory: single-flag evaluations of every type, FLAG_NOT_FOUND, the defaults of an
// unknown id, and what the provider does when the endpoint wants an API key and gets none.

const { OpenFeature } = require('@openfeature/server-sdk')
const { OFREPProvider } = require('@openfeature/ofrep-provider')
const { startBeacon } = require('../support/beacon')
const { sampleConfig } = require('../../tools/dev-hbase')

const ID = '7'
const KEY = 'node-test-key-0123456789'
const KEYS_ENV = 'BEACON_TEST_OFREP_NODE_KEYS'
let app

beforeAll(async () => {
  app = await startBeacon({
    env: { [KEYS_ENV]: KEY },
    overrides: { endpoints: { sample3: { ofrep: { apiKeysEnv: KEYS_ENV } } } }
  })
  // The provider configuration of docs/openfeature.md: baseUrl is the endpoint's base.
  await OpenFeature.setProviderAndWait(new OFREPProvider({ baseUrl: `${app.url}/api/sample5` }))
})

afterAll(async () => {
  await OpenFeature.close()
  if (app) await app.close()
})

async function metric (line) {
  const found = (await app.metrics.metrics()).split('\n').find((l) => l.startsWith(line + ' '))
  return found ? Number(found.split(' ').pop()) : 0
}

test('single flags of every type for an id, each one POST that beacon counts as a view', async () => {
  const config = sampleConfig(Number(ID))
  const client = OpenFeature.getClient()
  const context = { targetingKey: ID }
  const views = await metric('beacon_http_requests_total{endpoint="sample5",status="200"}')
  const details = [
    await client.getBooleanDetails('features.search', !config.features.search, context),
    await client.getStringDetails('variant', 'none', context),
    await client.getNumberDetails('sampleRate', -1, context),
    await client.getObjectDetails('features', {}, context)
  ]
  expect(details.map(({ flagKey, value, reason, errorCode }) => ({ flagKey, value, reason, errorCode }))).toEqual([
    { flagKey: 'features.search', value: config.features.search, reason: 'TARGETING_MATCH', errorCode: undefined },
    { flagKey: 'variant', value: config.variant, reason: 'TARGETING_MATCH', errorCode: undefined },
    { flagKey: 'sampleRate', value: config.sampleRate, reason: 'TARGETING_MATCH', errorCode: undefined },
    { flagKey: 'features', value: config.features, reason: 'TARGETING_MATCH', errorCode: undefined }
  ])
  expect(await metric('beacon_http_requests_total{endpoint="sample5",status="200"}')).toBe(views + details.length)
})

test('a key the config lacks is FLAG_NOT_FOUND; a value of another type is TYPE_MISMATCH; both give the code default', async () => {
  const client = OpenFeature.getClient()
  const missing = await client.getBooleanDetails('features.nope', true, { targetingKey: ID })
  expect(missing).toMatchObject({ value: true, reason: 'ERROR', errorCode: 'FLAG_NOT_FOUND' })
  expect(missing.errorMessage).toBe('no flag with this key in the config of this id')
  const mismatch = await client.getBooleanDetails('variant', false, { targetingKey: ID })
  expect(mismatch).toMatchObject({ value: false, reason: 'ERROR', errorCode: 'TYPE_MISMATCH' })
})

test("an unknown id: the endpoint's defaultConfig (reason STATIC), and the code default for keys it lacks", async () => {
  const client = OpenFeature.getClient()
  const context = { targetingKey: 'no-such-id-node' }
  const features = await client.getObjectDetails('features', { search: true }, context)
  expect(features).toMatchObject({ value: {}, reason: 'STATIC' })
  expect(features.errorCode).toBeUndefined()
  const variant = await client.getStringDetails('variant', 'A', context)
  expect(variant).toMatchObject({ value: 'A', reason: 'ERROR', errorCode: 'FLAG_NOT_FOUND' })
})

test('an endpoint with API keys: without a key every evaluation is a 401 and the code default; with one, the value', async () => {
  // This provider version has no initialize(): it is READY at once and meets the 401 on each
  // evaluation, which it throws; the SDK answers the code default with GENERAL, and the next
  // evaluation asks again (it does not stop for good, as the web provider does at init).
  const baseUrl = `${app.url}/api/sample3`
  await OpenFeature.setProviderAndWait('no-key', new OFREPProvider({ baseUrl }))
  const refused = await metric('beacon_http_requests_total{endpoint="sample3",status="401"}')
  const noKey = OpenFeature.getClient('no-key')
  for (let i = 0; i < 2; i++) {
    const details = await noKey.getStringDetails('variant', 'code default', { targetingKey: ID })
    expect(details).toMatchObject({ value: 'code default', reason: 'ERROR', errorCode: 'GENERAL' })
  }
  expect(noKey.providerStatus).toBe('READY')
  expect(await metric('beacon_http_requests_total{endpoint="sample3",status="401"}')).toBe(refused + 2)

  await OpenFeature.setProviderAndWait('wrong-key', new OFREPProvider({ baseUrl, headers: [['X-API-Key', 'wrong-key-0123456789abc']] }))
  const wrong = await OpenFeature.getClient('wrong-key').getStringDetails('variant', 'code default', { targetingKey: ID })
  expect(wrong).toMatchObject({ value: 'code default', reason: 'ERROR', errorCode: 'GENERAL' })

  await OpenFeature.setProviderAndWait('keyed', new OFREPProvider({ baseUrl, headers: [['Authorization', `Bearer ${KEY}`]] }))
  const keyed = await OpenFeature.getClient('keyed').getStringDetails('variant', 'code default', { targetingKey: ID })
  expect(keyed).toMatchObject({ value: sampleConfig(Number(ID)).variant, reason: 'TARGETING_MATCH' })
})
