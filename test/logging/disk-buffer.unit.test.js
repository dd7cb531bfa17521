'use strict'

// The "disk refuses writes" machine both disk sinks share, on jest's fake clock: its bound,
// its refusal reasons, one retry timer however often it is armed, and its log lines.
const { DiskBuffer, writeFailureReason } = require('../../logging/disk-buffer')

function build ({ maxLines = 3 } = {}) {
  const state = { waiting: 0, retries: 0, logs: [] }
  const disk = new DiskBuffer({
    what: 'test log',
    maxLines,
    retryMs: 1000,
    waiting: () => state.waiting,
    retry: () => { state.retries++ },
    log: (level, fields, message) => state.logs.push({ level, fields, message }),
    fields: () => ({ waiting: state.waiting }),
    now: () => Date.now()
  })
  return { disk, state }
}

const enospc = () => Object.assign(new Error('no space'), { code: 'ENOSPC' })

describe('DiskBuffer', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }))
  afterEach(() => jest.useRealTimers())

  test('has room below its bound and none at it', () => {
    const { disk, state } = build({ maxLines: 3 })
    state.waiting = 2
    expect(disk.hasRoom()).toBe(true)
    state.waiting = 3
    expect(disk.hasRoom()).toBe(false)
  })

  test('names why it refuses: backlog while writes work, the errno class while they fail', () => {
    const { disk } = build()
    expect(disk.refusalReason()).toBe('write_backlog')
    disk.failed(enospc())
    expect(disk.refusalReason()).toBe('disk_full')
    disk.worked()
    disk.failed(Object.assign(new Error('io'), { code: 'EIO' }))
    expect(disk.refusalReason()).toBe('write_error')
    expect(writeFailureReason('EDQUOT')).toBe('disk_full')
    expect(writeFailureReason(undefined)).toBe('write_error')
  })

  test('one retry per retryMs however often a write fails meanwhile, none after stop', () => {
    const { disk, state } = build()
    disk.failed(enospc())
    disk.failed(enospc())
    disk.armRetry()
    expect(disk.retrying).toBe(true)
    jest.advanceTimersByTime(999)
    expect(state.retries).toBe(0)
    jest.advanceTimersByTime(1)
    expect(state.retries).toBe(1)
    expect(disk.retrying).toBe(false)
    disk.failed(enospc())
    disk.stop()
    jest.advanceTimersByTime(5000)
    expect(state.retries).toBe(1)
    disk.armRetry()
    expect(disk.retrying).toBe(false)
  })

  test('logs the start of a failure, at most every 30 s while it lasts, and its end', () => {
    const { disk, state } = build()
    disk.failed(enospc())
    jest.advanceTimersByTime(29_999)
    disk.failed(enospc())
    jest.advanceTimersByTime(1)
    disk.failed(enospc())
    jest.advanceTimersByTime(500)
    disk.worked()
    disk.worked()
    expect(state.logs.map((l) => [l.level, l.message])).toEqual([
      ['error', 'test log cannot be written; lines wait in memory and are retried'],
      ['error', 'test log still cannot be written'],
      ['info', 'test log writable again']
    ])
    expect(state.logs[1].fields.failingMs).toBe(30_000)
    expect(state.logs[2].fields.failedMs).toBe(30_500)
    expect(disk.errors).toBe(3)
    expect(disk.lastError.code).toBe('ENOSPC')
    expect(disk.failure).toBeNull()
  })
})
