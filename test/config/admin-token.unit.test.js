'use strict'

// Where the admin token comes from, for the server (npm start) and for the CLI.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { serverAdminToken, cliAdminToken, stateTokenFile, isLoopback } = require('../../config/admin-token')

let dir
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-token-')) })
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

const FILE_TOKEN = 'from-file-0123456789abcdefghijklmnop'
const local = (over = {}) => ({ adminToken: null, adminHost: '127.0.0.1', stateDir: dir, ...over })

test('loopback: 127.0.0.0/8, ::1, localhost; nothing else', () => {
  for (const host of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', '::ffff:127.0.0.1']) expect(isLoopback(host)).toBe(true)
  for (const host of ['0.0.0.0', '::', '10.0.0.1', '192.168.1.1', 'example.com', '128.0.0.1']) expect(isLoopback(host)).toBe(false)
})

test('npm start with no token creates one in the state dir, mode 0600, and keeps it on the next start', () => {
  const first = serverAdminToken(local(), {})
  expect(first).toMatchObject({ source: 'state', created: true, file: stateTokenFile(dir) })
  expect(first.token).toMatch(/^[A-Za-z0-9_-]{43}$/)
  expect(fs.statSync(first.file).mode & 0o777).toBe(0o600)
  const again = serverAdminToken(local(), {})
  expect(again).toMatchObject({ source: 'state', created: false, token: first.token })
  // A fresh state dir, a fresh token.
  const other = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-token-'))
  try {
    expect(serverAdminToken(local({ stateDir: path.join(other, 'nested') }), {}).token).not.toBe(first.token)
  } finally {
    fs.rmSync(other, { recursive: true, force: true })
  }
})

test('the environment wins, then BEACON_ADMIN_TOKEN_FILE; neither writes the state dir', () => {
  expect(serverAdminToken(local({ adminToken: 'from-env' }), {})).toEqual({ token: 'from-env', source: 'env' })
  const named = path.join(dir, 'secret')
  fs.writeFileSync(named, `  ${FILE_TOKEN} \nignored\n`)
  expect(serverAdminToken(local(), { BEACON_ADMIN_TOKEN_FILE: named })).toEqual({ token: FILE_TOKEN, source: 'file', file: named })
  expect(fs.existsSync(stateTokenFile(dir))).toBe(false)
  const missing = path.join(dir, 'none')
  expect(() => serverAdminToken(local(), { BEACON_ADMIN_TOKEN_FILE: missing })).toThrow(/cannot read the admin token file .*none: ENOENT/)
  fs.writeFileSync(named, '\n')
  expect(() => serverAdminToken(local(), { BEACON_ADMIN_TOKEN_FILE: named })).toThrow(/is empty/)
  fs.writeFileSync(named, 'x'.repeat(31) + '\n')
  expect(() => serverAdminToken(local(), { BEACON_ADMIN_TOKEN_FILE: named })).toThrow(/shorter than 32 characters/)
})

test('an admin API beyond loopback needs an explicit token', () => {
  expect(() => serverAdminToken(local({ adminHost: '0.0.0.0' }), {})).toThrow(/listens on 0\.0\.0\.0 \(ADMIN_HOST\).*BEACON_ADMIN_TOKEN/)
  expect(fs.existsSync(stateTokenFile(dir))).toBe(false)
  expect(serverAdminToken(local({ adminHost: '0.0.0.0', adminToken: 't' }), {}).token).toBe('t')
  // Named tokens alone are enough: there is then no single token to hand on.
  expect(serverAdminToken(local({ adminHost: '0.0.0.0', adminTokens: `ci:${FILE_TOKEN}` }), {})).toEqual({ token: null, source: 'named' })
  expect(fs.existsSync(stateTokenFile(dir))).toBe(false)
})

test('a state token file others can read is refused, not used', () => {
  fs.writeFileSync(stateTokenFile(dir), FILE_TOKEN + '\n', { mode: 0o644 })
  fs.chmodSync(stateTokenFile(dir), 0o644)
  expect(() => serverAdminToken(local(), {})).toThrow(/can be read by other users: chmod 600/)
})

test('a state token file that is a symbolic link, or another user\'s, is refused without being read', () => {
  const elsewhere = path.join(dir, 'elsewhere')
  fs.writeFileSync(elsewhere, FILE_TOKEN + '\n', { mode: 0o600 })
  fs.symlinkSync(elsewhere, stateTokenFile(dir))
  expect(() => serverAdminToken(local(), {})).toThrow(/admin-token is a symbolic link: delete it for a new one/)
  fs.unlinkSync(stateTokenFile(dir))
  fs.writeFileSync(stateTokenFile(dir), FILE_TOKEN + '\n', { mode: 0o600 })
  expect(serverAdminToken(local(), {}).token).toBe(FILE_TOKEN)
  // Root can hand the file to another user; others cannot, and then the check is moot.
  if (process.getuid() === 0) {
    fs.chownSync(stateTokenFile(dir), 65534, 65534)
    expect(() => serverAdminToken(local(), {})).toThrow(/belongs to another user \(uid 65534\)/)
  }
})

test('the CLI: env, then the named file, then the state dir file for a local URL only; it never creates one', () => {
  const url = 'http://127.0.0.1:4001'
  expect(cliAdminToken({ adminUrl: url, stateDir: dir, env: {} })).toEqual({ token: null })
  expect(fs.existsSync(stateTokenFile(dir))).toBe(false)
  const { token } = serverAdminToken(local(), {})
  expect(cliAdminToken({ adminUrl: url, stateDir: dir, env: {} })).toEqual({ token, file: stateTokenFile(dir) })
  expect(cliAdminToken({ adminUrl: 'http://localhost:4001', stateDir: dir, env: {} }).token).toBe(token)
  expect(cliAdminToken({ adminUrl: 'http://admin.example:4001', stateDir: dir, env: {} })).toEqual({ token: null })
  expect(cliAdminToken({ adminUrl: url, stateDir: dir, env: { BEACON_ADMIN_TOKEN: 'e' } })).toEqual({ token: 'e' })
  const named = path.join(dir, 'secret')
  fs.writeFileSync(named, FILE_TOKEN + '\n')
  expect(cliAdminToken({ adminUrl: url, stateDir: dir, env: { BEACON_ADMIN_TOKEN_FILE: named } }))
    .toEqual({ token: FILE_TOKEN, file: named })
})
