'use strict'

// Two projects: `main`, and `faults` (stops, kills and restarts HBase instances of its own, so
// never the shared one). `npm test` runs both in one invocation, in band: on 2 cores jest would
// use a single worker anyway, and one invocation starts the shared HBase once.
const common = {
  testEnvironment: 'node',
  globalSetup: '<rootDir>/test/support/global-setup.js',
  globalTeardown: '<rootDir>/test/support/global-teardown.js'
}

module.exports = {
  testTimeout: 60000,
  projects: [
    { ...common, displayName: 'main', testMatch: ['<rootDir>/test/**/*.test.js'], testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/faults/'] },
    { ...common, displayName: 'faults', testMatch: ['<rootDir>/test/faults/**/*.test.js'] }
  ]
}
