'use strict'

const { Writable } = require('node:stream')
const { createLogger, closeLogger } = require('../../logging/logger')

test('createLogger writes JSON lines at the level asked for, to the destination given', async () => {
  const lines = []
  const destination = new Writable({
    write (chunk, encoding, callback) {
      lines.push(...chunk.toString().split('\n').filter(Boolean))
      callback()
    }
  })
  const logger = createLogger({ level: 'warn', destination })
  logger.info('not shown')
  logger.warn({ code: 'X' }, 'shown')
  await closeLogger(logger)
  expect(lines).toHaveLength(1)
  expect(JSON.parse(lines[0])).toMatchObject({ level: 40, code: 'X', msg: 'shown' })
})

test('the default destination is asynchronous stdout and flushes on close', async () => {
  const logger = createLogger({ level: 'silent' })
  expect(logger.level).toBe('silent')
  await expect(closeLogger(logger)).resolves.toBeUndefined()
})
