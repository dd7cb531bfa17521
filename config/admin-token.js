'use strict'

/**
 * Where the admin API's bearer token comes from. Highest first: BEACON_ADMIN_TOKEN, then the
 * file BEACON_ADMIN_TOKEN_FILE names, then (only while the admin API listens on loopback) the
 * file `admin-token` of the state dir, which `npm start` creates once with a random token, mode
 * 0600. The CLI on the same machine reads that file, so it works right after `npm start`.
 * An admin API on any other address must be given its token explicitly.
 */

const fs = require('node:fs')
const net = require('node:net')
const path = require('node:path')
const crypto = require('node:crypto')
const { MIN_TOKEN_CHARS } = require('./schema')

const TOKEN_FILE_ENV = 'BEACON_ADMIN_TOKEN_FILE'
const STATE_FILE = 'admin-token'
const TOKEN_BYTES = 32

/**
 * @param {string} stateDir
 * @returns {string} the token file `npm start` keeps in the state dir
 */
function stateTokenFile (stateDir) {
  return path.join(stateDir, STATE_FILE)
}

/**
 * Is `host` (an address or a name) on this machine only?
 * @param {string} host
 * @returns {boolean}
 */
function isLoopback (host) {
  const bare = host.replace(/^\[|\]$/g, '')
  if (bare === 'localhost') return true
  if (net.isIPv4(bare)) return bare.startsWith('127.')
  if (net.isIPv6(bare)) return bare === '::1' || /^::ffff:127\./i.test(bare)
  return false
}

/**
 * The first line of a token's text, trimmed, checked.
 * @param {string} text
 * @param {string} file where it was read, for the errors
 * @returns {string}
 */
function tokenOf (text, file) {
  const token = text.split('\n')[0].trim()
  if (!token) throw new Error(`the admin token file ${file} is empty`)
  if (token.length < MIN_TOKEN_CHARS) {
    throw new Error(`the admin token in ${file} is shorter than ${MIN_TOKEN_CHARS} characters: give a longer one ` +
      '(openssl rand -base64 32 makes one)')
  }
  return token
}

/**
 * The first line of a token file an operator named (BEACON_ADMIN_TOKEN_FILE), trimmed: read as
 * given, links followed (a secret store may mount it as one).
 * @param {string} file
 * @returns {string}
 * @throws {Error} when the file cannot be read or holds no token
 */
function readTokenFile (file) {
  let text
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (e) {
    const err = /** @type {NodeJS.ErrnoException} */ (e)
    throw new Error(`cannot read the admin token file ${file}: ${err.code || err.message}`)
  }
  return tokenOf(text, file)
}

/**
 * The state dir's existing token file, which beacon trusts without being told to: opened
 * without following a symbolic link (another user could point it anywhere), and refused unless
 * it is a plain file of this user that no one else may read.
 * @param {string} file
 * @returns {string}
 */
function readStateTokenFile (file) {
  let fd
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW)
  } catch (e) {
    const err = /** @type {NodeJS.ErrnoException} */ (e)
    if (err.code === 'ELOOP') throw new Error(`the admin token file ${file} is a symbolic link: delete it for a new one`)
    throw new Error(`cannot read the admin token file ${file}: ${err.code || err.message}`)
  }
  try {
    const stat = fs.fstatSync(fd)
    if (!stat.isFile()) throw new Error(`the admin token file ${file} is not a plain file: delete it for a new one`)
    if (typeof process.getuid === 'function' && stat.uid !== process.getuid()) {
      throw new Error(`the admin token file ${file} belongs to another user (uid ${stat.uid}): delete it for a new one`)
    }
    if ((stat.mode & 0o077) !== 0) {
      throw new Error(`the admin token file ${file} can be read by other users: chmod 600 it, or delete it for a new one`)
    }
    return tokenOf(fs.readFileSync(fd, 'utf8'), file)
  } finally {
    fs.closeSync(fd)
  }
}

/**
 * The state dir's token: read when it exists, else created with a random token (mode 0600).
 * Creation is exclusive, so two starts on one state dir end with the same token.
 * @param {string} file
 * @returns {{ token: string, created: boolean }}
 */
function stateToken (file) {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
  const token = crypto.randomBytes(TOKEN_BYTES).toString('base64url')
  try {
    fs.writeFileSync(file, token + '\n', { flag: 'wx', mode: 0o600 })
    return { token, created: true }
  } catch (e) {
    const err = /** @type {NodeJS.ErrnoException} */ (e)
    if (err.code !== 'EEXIST') throw new Error(`cannot create the admin token file ${file}: ${err.code || err.message}`)
  }
  return { token: readStateTokenFile(file), created: false }
}

/**
 * The token the server's admin API uses, for `npm start`.
 * @param {Readonly<Record<string, any>>} settings its adminToken, adminHost and stateDir
 * @param {Record<string, string|undefined>} [env]
 * @returns {{ token: string|null, source: 'env'|'file'|'state'|'named', file?: string, created?: boolean }}
 *   named: no single token, the named ones only (BEACON_ADMIN_TOKENS)
 * @throws {Error} a token file that cannot be read; a non-loopback admin address with no token
 */
function serverAdminToken (settings, env = process.env) {
  if (settings.adminToken) return { token: settings.adminToken, source: 'env' }
  if (env[TOKEN_FILE_ENV]) {
    const file = path.resolve(env[TOKEN_FILE_ENV])
    return { token: readTokenFile(file), source: 'file', file }
  }
  if (!isLoopback(settings.adminHost)) {
    if (settings.adminTokens) return { token: null, source: 'named' }
    throw new Error(`the admin API listens on ${settings.adminHost} (ADMIN_HOST), beyond this machine: ` +
      `give it a token with BEACON_ADMIN_TOKEN, ${TOKEN_FILE_ENV} or BEACON_ADMIN_TOKENS`)
  }
  const file = stateTokenFile(settings.stateDir)
  return { ...stateToken(file), source: 'state', file }
}

/**
 * The token the CLI sends: BEACON_ADMIN_TOKEN, the file BEACON_ADMIN_TOKEN_FILE names, or, for
 * an admin URL on this machine, the state dir's file when there is one. Never creates a file.
 * @param {{ adminUrl: string, stateDir: string, env?: Record<string, string|undefined> }} where
 * @returns {{ token: string|null, file?: string }}
 */
function cliAdminToken ({ adminUrl, stateDir, env = process.env }) {
  if (env.BEACON_ADMIN_TOKEN) return { token: env.BEACON_ADMIN_TOKEN }
  if (env[TOKEN_FILE_ENV]) {
    const file = path.resolve(env[TOKEN_FILE_ENV])
    return { token: readTokenFile(file), file }
  }
  let host
  try {
    host = new URL(adminUrl).hostname
  } catch {
    return { token: null }
  }
  const file = stateTokenFile(stateDir)
  if (!isLoopback(host) || !fs.existsSync(file)) return { token: null }
  return { token: readTokenFile(file), file }
}

module.exports = { serverAdminToken, cliAdminToken, stateTokenFile, isLoopback, TOKEN_FILE_ENV }
