'use strict'

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { testClient, uniqueTable } = require('../support/hbase')
const { ACCESS_LOG_FAMILY } = require('../../logging/access-log-layout')
const { createSinks } = require('../../logging')
const { countLines } = require('../../logging/count-lines')
const { accessEntry } = require('../../logging/access-entry')

let client
let table
let stateDir

beforeAll(async () => {
  client = testClient()
  table = uniqueTable('sinks')
  await client.admin.createTable(table, { families: [ACCESS_LOG_FAMILY] })
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-sinks-'))
})

afterAll(async () => {
  await client.admin.deleteTable(table).catch(() => {})
  await client.close()
  fs.rmSync(stateDir, { recursive: true, force: true })
})

test('createSinks builds the named sinks from settings; closeAll flushes and closes them all', async () => {
  const settings = {
    file: { type: 'file', path: path.join(stateDir, 'logs', 'access.log'), rotateSize: '100m', rotateFrequency: 'daily', keepFiles: 14 },
    hbase: {
      type: 'hbase',
      table,
      buckets: 16,
      batchSize: 500,
      flushIntervalMs: 100,
      maxQueue: 50000,
      journalDir: path.join(stateDir, 'journal', 'hbase'),
      overload: 'spill',
      durable: false,
      retryMaxMs: 30000
    }
  }
  const sinks = createSinks(settings, { client, stateDir, writerId: 'ix1', workerTag: 'w1' })
  expect([...sinks.keys()]).toEqual(['file', 'hbase'])
  expect(sinks.get('hbase').maxQueue).toBe(50000)
  for (let i = 0; i < 250; i++) {
    const entry = accessEntry({ ts: Date.now(), endpoint: 'sample6', id: String(i), status: 200, ms: 1, ip: '::1', ua: 'ua', ref: null })
    for (const sink of sinks.values()) sink.write(entry)
  }
  const closing = sinks.closeAll()
  await closing
  await sinks.closeAll()
  expect(countLines(path.join(stateDir, 'logs'))).toBe(250)
  expect(fs.readdirSync(path.join(stateDir, 'logs'))[0]).toMatch(/^access-w1\./)
  expect(await client.count(table)).toBe(250)
  expect(sinks.get('hbase').stats()).toMatchObject({ accepted: 250, written: 250, journalPending: 0 })
  expect(sinks.get('file').stats()).toMatchObject({ accepted: 250, written: 250, pending: 0 })
})

test('unknown sink types and an hbase sink without a client are errors', () => {
  expect(() => createSinks({ x: { type: 'kafka' } }, { stateDir, writerId: 'ix2' })).toThrow(/unknown type "kafka"/)
  expect(() => createSinks({ h: { type: 'hbase', table, journalDir: path.join(stateDir, 'j') } }, { stateDir, writerId: 'ix3' })).toThrow(
    /no client/
  )
})
