'use strict'

// The admin's master bookkeeping, against a stand-in for the RPC pool (no HBase): which master it
// asks, and how long it lets a call run. The same paths run against a real master failover in
// test/faults/hbase-cluster-client.test.js.

const { createAdmin } = require('../lib/admin')
const { RetryPolicy } = require('../lib/retry')
const { remoteError } = require('../lib/errors')

const M1 = '127.0.0.1:16000'
const M2 = '127.0.0.1:16001'
const RPC_TIMEOUT = 100

/**
 * Two masters; `state.active` is the active one. Any server answers GetActiveMaster with it; a
 * MasterService call elsewhere fails as a backup master answers (ServerNotRunningYetException),
 * or with `state.initializing`, as a master still initializing does (PleaseHoldException).
 */
function twoMasters () {
  const state = { active: M1, initializing: 0 }
  const calls = []
  const pool = {
    async call (address, service, method, request, timeoutMs) {
      calls.push({ address, method, timeoutMs })
      if (method === 'GetActiveMaster') {
        const [hostName, port] = state.active.split(':')
        return { serverName: { hostName, port: Number(port) } }
      }
      if (address !== state.active) {
        throw remoteError('org.apache.hadoop.hbase.ipc.ServerNotRunningYetException', 'Server is not running yet')
      }
      if (state.initializing > 0) {
        state.initializing--
        throw remoteError('org.apache.hadoop.hbase.PleaseHoldException', 'Master is initializing')
      }
      return method === 'GetTableDescriptors' ? { tableSchema: [{}] } : {}
    }
  }
  const policy = new RetryPolicy({ pause: 1, maxPause: 5, rpcTimeout: RPC_TIMEOUT })
  const core = { pool, policy, options: { bootstrap: [M1, M2], operationTimeout: 2000 }, locator: {} }
  const admin = createAdmin(/** @type {any} */ (core), (operation) => operation())
  return { admin, state, calls }
}

const sent = (calls, method) => calls.filter((c) => c.method === method).map((c) => c.address)

test('after a failover the admin leaves a master that now answers as a backup and finds the new active one', async () => {
  const { admin, state, calls } = twoMasters()
  expect(await admin.tableExists('t')).toBe(true)
  expect(sent(calls, 'GetActiveMaster')).toEqual([M1])
  // M1 was killed and came back as a backup before this client called again: no connection
  // error ever told the client, only the backup's answer does.
  state.active = M2
  calls.length = 0
  expect(await admin.tableExists('t')).toBe(true)
  expect(sent(calls, 'GetTableDescriptors')).toEqual([M1, M2])
  expect(sent(calls, 'GetActiveMaster')).toHaveLength(1)
  // And it stays with the new one.
  calls.length = 0
  await admin.tableExists('t')
  expect(calls.map((c) => `${c.method}@${c.address}`)).toEqual([`GetTableDescriptors@${M2}`])
})

test('a master that is still initializing (PleaseHold) is waited for, not abandoned', async () => {
  const { admin, state, calls } = twoMasters()
  state.initializing = 3
  expect(await admin.tableExists('t')).toBe(true)
  expect(sent(calls, 'GetTableDescriptors')).toEqual([M1, M1, M1, M1])
  expect(sent(calls, 'GetActiveMaster')).toHaveLength(1)
})

test('a blocking master call (MoveRegion) may run until its deadline, not only rpcTimeout; others get rpcTimeout', async () => {
  const { admin, calls } = twoMasters()
  await admin.moveRegion('t,,1700000000000.0123456789abcdef0123456789abcdef.', { timeout: 5000 })
  const move = calls.find((c) => c.method === 'MoveRegion')
  expect(move.timeoutMs).toBeGreaterThan(4000)
  await admin.tableExists('t')
  expect(calls.find((c) => c.method === 'GetTableDescriptors').timeoutMs).toBeLessThanOrEqual(RPC_TIMEOUT)
})

test('region names and merge arguments are checked before anything is sent', async () => {
  const { admin, calls } = twoMasters()
  await expect(admin.moveRegion('not a region name')).rejects.toMatchObject({ code: 'HBASE_BAD_ARGUMENT' })
  await expect(admin.mergeRegions(['t,,1.0123456789abcdef0123456789abcdef.'])).rejects.toMatchObject({ code: 'HBASE_BAD_ARGUMENT' })
  await expect(admin.moveRegion('t,,1.0123456789abcdef0123456789abcdef.', { to: 'no-port' })).rejects.toMatchObject({
    code: 'HBASE_BAD_ARGUMENT'
  })
  expect(calls).toEqual([])
})

/** One master that records its CreateTable requests and finishes every procedure at once. */
function recordingMaster () {
  const requests = []
  const pool = {
    async call (address, service, method, request) {
      if (method === 'GetActiveMaster') return { serverName: { hostName: '127.0.0.1', port: 16000 } }
      if (method === 'CreateTable') requests.push(request)
      return method === 'getProcedureResult' ? { state: 2 } : { procId: 7 }
    }
  }
  const policy = new RetryPolicy({ pause: 1, maxPause: 5, rpcTimeout: RPC_TIMEOUT })
  const core = { pool, policy, options: { bootstrap: [M1], operationTimeout: 2000 }, locator: { invalidateTable () {} } }
  return { admin: createAdmin(/** @type {any} */ (core), (operation) => operation()), requests }
}

test('createTable gives every family the attributes it is asked for, beside the TTL', async () => {
  const { admin, requests } = recordingMaster()
  await admin.createTable('t', { families: ['a', 'b'], ttl: 60, attributes: { COMPRESSION: 'GZ', DATA_BLOCK_ENCODING: 'FAST_DIFF' } })
  const families = requests[0].tableSchema.columnFamilies
  expect(families.map((f) => f.name.toString())).toEqual(['a', 'b'])
  for (const f of families) {
    expect(f.attributes.map((a) => [a.first.toString(), a.second.toString()]))
      .toEqual([['TTL', '60'], ['COMPRESSION', 'GZ'], ['DATA_BLOCK_ENCODING', 'FAST_DIFF']])
  }
})

test('createTable refuses attributes it does not take, before asking the master', async () => {
  const { admin, requests } = recordingMaster()
  for (const attributes of [{ TTL: '5' }, { VERSIONS: '3' }, { compression: 'GZ' }, { COMPRESSION: '' }, { COMPRESSION: 5 }, 'GZ']) {
    await expect(admin.createTable('t', { families: ['f'], attributes: /** @type {any} */ (attributes) }))
      .rejects.toMatchObject({ code: 'HBASE_BAD_ARGUMENT' })
  }
  expect(requests).toHaveLength(0)
})
