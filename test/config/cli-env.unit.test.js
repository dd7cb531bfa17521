'use strict'

const path = require('node:path')
const { cliEnvFor } = require('../../config/cli-env')
const { DEFAULTS } = require('../../config/defaults')

test('the defaults need nothing; another admin port or state dir is named, quoted for a shell when it must be', () => {
  expect(cliEnvFor({ adminPort: DEFAULTS.adminPort, stateDir: DEFAULTS.stateDir })).toBe('')
  expect(cliEnvFor({ adminPort: 17001, stateDir: DEFAULTS.stateDir })).toBe('BEACON_ADMIN_URL=http://127.0.0.1:17001 ')
  expect(cliEnvFor({ adminPort: DEFAULTS.adminPort, stateDir: '/srv/beacon state' })).toBe("BEACON_STATE_DIR='/srv/beacon state' ")
  const dir = path.join('/tmp', 'b-1')
  expect(cliEnvFor({ adminPort: 5001, stateDir: dir })).toBe(`BEACON_ADMIN_URL=http://127.0.0.1:5001 BEACON_STATE_DIR=${dir} `)
})
