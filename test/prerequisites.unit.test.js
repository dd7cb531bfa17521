'use strict'

// What `npm test` does before the tests when Debian's chromium or haproxy is missing.

const { missingPackages, plan } = require('./prerequisites')

test('missing: the places the tests look (CHROMIUM_PATH or /usr/bin/chromium; haproxy as tools/lb finds it)', () => {
  const seen = []
  const probe = { isExecutable: (f) => { seen.push(f); return false }, haproxyFound: () => true }
  expect(missingPackages({}, probe)).toEqual(['chromium'])
  expect(missingPackages({ CHROMIUM_PATH: '/opt/c' }, probe)).toEqual(['chromium'])
  expect(seen).toEqual(['/usr/bin/chromium', '/opt/c'])
  expect(missingPackages({}, { isExecutable: () => true, haproxyFound: () => false })).toEqual(['haproxy'])
  expect(missingPackages({}, { isExecutable: () => true, haproxyFound: () => true })).toEqual([])
})

test('root with apt-get installs exactly the missing packages from Debian', () => {
  expect(plan([], { root: false, hasAptGet: false })).toEqual({ action: 'none' })
  expect(plan(['chromium', 'haproxy'], { root: true, hasAptGet: true })).toEqual({
    action: 'install',
    commands: [['apt-get', 'update'], ['apt-get', 'install', '-y', '--no-install-recommends', 'chromium', 'haproxy']]
  })
})

test('anyone else stops at once with one line naming the command', () => {
  const stop = plan(['haproxy'], { root: false, hasAptGet: true })
  expect(stop).toEqual({
    action: 'stop',
    message: 'npm test needs haproxy: run  sudo apt-get update && sudo apt-get install -y --no-install-recommends haproxy  then npm test ' +
      'again'
  })
  expect(stop.message).not.toContain('\n')
  const chromium = plan(['chromium'], { root: true, hasAptGet: false })
  expect(chromium.message).toMatch(/^npm test needs chromium: run {2}install chromium \(Debian: apt-get install chromium\)/)
})
