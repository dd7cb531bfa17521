#!/usr/bin/env node
'use strict'

// Runs before `npm test` (the `pretest` script; .ci/run runs `npm test` alone): the tests drive
// Debian's chromium (the page snippets and the dashboard, through playwright-core) and haproxy
// (app hosts behind a load balancer) for real. A missing one is installed with apt-get when this
// runs as root; otherwise this stops at once with one line naming the command to run.
// Nothing is downloaded from anywhere but Debian's package archive.

const fs = require('node:fs')
const { spawnSync } = require('node:child_process')
const { findHAProxy } = require('../tools/lb')

const APT_FLAGS = ['-y', '--no-install-recommends']

/**
 * @param {string} file
 * @returns {boolean}
 */
function executable (file) {
  try {
    fs.accessSync(file, fs.constants.X_OK)
    return fs.statSync(file).isFile()
  } catch {
    return false
  }
}

/**
 * The Debian packages the tests need that this machine lacks. The same places the tests look:
 * CHROMIUM_PATH or /usr/bin/chromium; BEACON_HAPROXY, /usr/sbin/haproxy or the PATH.
 * @param {NodeJS.ProcessEnv} env
 * @param {{ isExecutable?: (file: string) => boolean, haproxyFound?: (env: NodeJS.ProcessEnv) => boolean }} [probe]
 * @returns {string[]}
 */
function missingPackages (env, probe = {}) {
  const isExecutable = probe.isExecutable || executable
  const haproxyFound = probe.haproxyFound || ((e) => {
    try {
      findHAProxy(e)
      return true
    } catch {
      return false
    }
  })
  const missing = []
  if (!isExecutable(env.CHROMIUM_PATH || '/usr/bin/chromium')) missing.push('chromium')
  if (!haproxyFound(env)) missing.push('haproxy')
  return missing
}

/**
 * What to do about the missing packages.
 * @param {string[]} missing
 * @param {{ root: boolean, hasAptGet: boolean }} machine
 * @returns {{ action: 'none' } | { action: 'install', commands: string[][] } | { action: 'stop', message: string }}
 */
function plan (missing, { root, hasAptGet }) {
  if (missing.length === 0) return { action: 'none' }
  const install = ['apt-get', 'install', ...APT_FLAGS, ...missing]
  if (root && hasAptGet) return { action: 'install', commands: [['apt-get', 'update'], install] }
  const how = hasAptGet
    ? `sudo apt-get update && sudo ${install.join(' ')}`
    : `install ${missing.join(' and ')} (Debian: apt-get install ${missing.join(' ')})`
  return { action: 'stop', message: `npm test needs ${missing.join(' and ')}: run  ${how}  then npm test again` }
}

function main () {
  const missing = missingPackages(process.env)
  const hasAptGet = spawnSync('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' }).status === 0
  const next = plan(missing, { root: process.getuid?.() === 0, hasAptGet })
  if (next.action === 'none') return
  if (next.action === 'stop') {
    console.error(next.message)
    process.exit(1)
  }
  console.error(`npm test: installing Debian's ${missing.join(' and ')} with apt-get (root)`)
  for (const [cmd, ...args] of next.commands) {
    const run = spawnSync(cmd, args, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } })
    if (run.status !== 0) {
      console.error(`npm test: \`${cmd} ${args.join(' ')}\` failed (exit ${run.status ?? run.signal})`)
      process.exit(1)
    }
  }
  const still = missingPackages(process.env)
  if (still.length) {
    console.error(`npm test: ${still.join(' and ')} still not found after apt-get install`)
    process.exit(1)
  }
}

if (require.main === module) main()

module.exports = { missingPackages, plan }
