'use strict'

const path = require('node:path')
const { execFile } = require('node:child_process')

const CLI = path.join(__dirname, '..', '..', 'bin', 'beacon.js')

/**
 * Runs `beacon <args>` as a user does (`node bin/beacon.js` in a child process) with only these
 * environment variables and PATH.
 * @param {string[]} args
 * @param {Record<string, string>} env e.g. BEACON_ADMIN_URL, BEACON_ADMIN_TOKEN, BEACON_STATE_DIR
 * @returns {Promise<{ code: number, stdout: string, stderr: string }>}
 */
function runCli (args, env) {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH, ...env }, timeout: 60000 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number(err.code) : 0, stdout, stderr })
    })
  })
}

module.exports = { runCli }
