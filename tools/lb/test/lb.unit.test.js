'use strict'

// tools/lb's pure parts: the haproxy.cfg it writes, the `show stat` parser, finding the binary.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { haproxyConfig, DEFAULTS } = require('../config')
const { parseStatCsv } = require('../stats')
const { findHAProxy } = require('..')

const base = {
  listen: { host: '198.18.0.40', port: 4000 },
  servers: [
    { name: 'app', host: '198.18.0.10', port: 4000, checkPort: 4001 },
    { name: 'app2', host: '198.18.0.11', port: 4000, checkPort: 4001 }
  ],
  statsSocket: '/tmp/x/haproxy.sock'
}

test('round robin over the app hosts, /readyz checked on the admin port, fast checks, retries on another host', () => {
  const cfg = haproxyConfig(base)
  const lines = cfg.split('\n').map((l) => l.trim())
  expect(lines).toEqual(expect.arrayContaining([
    'bind 198.18.0.40:4000',
    'balance roundrobin',
    'option httpchk GET /readyz',
    'http-check expect status 200',
    'server app 198.18.0.10:4000 check port 4001',
    'server app2 198.18.0.11:4000 check port 4001',
    'default-server inter 500ms fastinter 250ms downinter 500ms fall 2 rise 2 observe layer4 error-limit 3 on-error mark-down',
    'retries 2',
    'retry-on conn-failure empty-response',
    'option redispatch 1',
    'http-response set-header X-Beacon-Backend %[srv_name]',
    'stats socket /tmp/x/haproxy.sock mode 600 level admin',
    'nbthread 1'
  ]))
  // No fixed maxconn unless asked: HAProxy derives it from the file-descriptor limit.
  expect(cfg).not.toMatch(/maxconn/)
  expect(haproxyConfig({ ...base, maxconn: 4000, backendHeader: null, fall: 3 })).toMatch(/maxconn 4000[\s\S]*fall 3 /)
  expect(haproxyConfig({ ...base, backendHeader: null })).not.toMatch(/set-header/)
  expect(haproxyConfig({ ...base, servers: [{ name: 'a', host: '127.0.0.1', port: 4000 }] })).toMatch(/server a 127\.0\.0\.1:4000 check\n/)
  expect(DEFAULTS.retryOn).not.toMatch(/response-timeout/) // a slow host is never asked twice
})

test.each([
  [{ listen: { host: '198.18.0.40', port: 0 } }, /listen.port must be a port number/],
  [{ servers: [] }, /at least one app host/],
  [{ servers: [{ name: 'a b', host: 'x', port: 1 }] }, /server name "a b"/],
  [{ servers: [{ name: 'a', host: 'x', port: 1 }, { name: 'a', host: 'y', port: 1 }] }, /used twice/],
  [{ servers: [{ name: 'a', host: 'x', port: 1, checkPort: 70000 }] }, /checkPort must be a port number/],
  [{ statsSocket: 'rel/haproxy.sock' }, /statsSocket must be an absolute path/],
  [{ interMs: 0 }, /interMs must be a positive integer/],
  [{ retryOn: 'all; rm -rf /' }, /retryOn must be HAProxy retry-on keywords/],
  [{ inter: 500 }, /unknown option "inter"/]
])('rejects %j', (bad, message) => {
  expect(() => haproxyConfig({ ...base, ...bad })).toThrow(message)
})

test('show stat CSV: one object per line, numbers parsed, empty fields null', () => {
  const csv = '# pxname,svname,scur,stot,status,lbtot,check_status,\n' +
    'beacon,FRONTEND,3,100,OPEN,,,\n' +
    'app,app,0,42,UP,42,L7OK,\n' +
    'app,app2,0,7,DOWN,7,L4CON,\n\n'
  expect(parseStatCsv(csv)).toEqual([
    { pxname: 'beacon', svname: 'FRONTEND', scur: 3, stot: 100, status: 'OPEN', lbtot: null, check_status: null },
    { pxname: 'app', svname: 'app', scur: 0, stot: 42, status: 'UP', lbtot: 42, check_status: 'L7OK' },
    { pxname: 'app', svname: 'app2', scur: 0, stot: 7, status: 'DOWN', lbtot: 7, check_status: 'L4CON' }
  ])
  expect(() => parseStatCsv('Unknown command\n')).toThrow(/not a "show stat" answer/)
})

test('findHAProxy: BEACON_HAPROXY, else Debian\'s path or PATH; missing -> says where it looked and how to install it', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-lb-unit-'))
  try {
    const fake = path.join(dir, 'haproxy')
    fs.writeFileSync(fake, '#!/bin/sh\n', { mode: 0o755 })
    expect(findHAProxy({ BEACON_HAPROXY: fake })).toBe(fake)
    expect(() => findHAProxy({ BEACON_HAPROXY: path.join(dir, 'nope') })).toThrow(
      /haproxy not found \(looked at BEACON_HAPROXY=.*nope\); install Debian's package \(apt-get install haproxy\)/
    )
    // With nothing on the PATH, only the fixed places are looked at.
    const found = (() => { try { return findHAProxy({ PATH: '' }) } catch (err) { return err.message } })()
    expect(found).toMatch(/^\/usr\/(local\/)?sbin\/haproxy$|looked at \/usr\/sbin\/haproxy, \/usr\/local\/sbin\/haproxy\)/)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('the client address is forwarded; a per-client stick table only when clientRatePerSecond is set', () => {
  const plain = haproxyConfig(base).split('\n').map((l) => l.trim())
  expect(plain).toContain('option forwardfor')
  expect(plain.some((l) => l.startsWith('stick-table'))).toBe(false)
  const limited = haproxyConfig({ ...base, clientRatePerSecond: 50 }).split('\n').map((l) => l.trim())
  expect(limited).toEqual(expect.arrayContaining([
    'stick-table type ipv6 size 1m expire 30s store http_req_rate(10s)',
    'http-request track-sc0 src'
  ]))
  expect(limited.find((l) => l.startsWith('http-request return status 429'))).toMatch(/hdr Retry-After 10 .*gt 500 \}$/)
  expect(() => haproxyConfig({ ...base, clientRatePerSecond: -1 })).toThrow(/clientRatePerSecond/)
})
