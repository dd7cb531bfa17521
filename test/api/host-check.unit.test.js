'use strict'

// The admin port's Host check (api/admin/host-check.js): its own names pass, with no port or the
// bound one; any other name, a wrong port or a malformed Host does not.

const { createHostCheck, splitHost } = require('../../api/admin/host-check')

const at = (address, port = 4001) => () => ({ address, port })

test('bound to loopback: localhost and the address, with no port or the bound one; nothing else', () => {
  const own = createHostCheck({ address: at('127.0.0.1') })
  for (const host of ['localhost', 'localhost:4001', 'LocalHost:4001', '127.0.0.1', '127.0.0.1:4001', undefined]) {
    expect([host, own(host)]).toEqual([host, true])
  }
  for (const host of ['evil.example', 'evil.example:4001', '127.0.0.1:4002', 'localhost:80', '10.0.0.1:4001', '[::1]:4001',
    '127.0.0.1:x', 'localhost:4001:1', '', ':4001', 'localhost.evil.example']) {
    expect([host, own(host)]).toEqual([host, false])
  }
})

test('bound to every address: any IP address is its own (a rebound name is never an address); names still are not', () => {
  const own = createHostCheck({ address: at('0.0.0.0') })
  for (const host of ['10.1.2.3:4001', '192.168.0.7', '[fe80::1]:4001', 'localhost:4001']) expect([host, own(host)]).toEqual([host, true])
  for (const host of ['evil.example:4001', 'admin.internal', '10.1.2.3:4002']) expect([host, own(host)]).toEqual([host, false])
  const v6 = createHostCheck({ address: at('::') })
  expect(v6('[2001:db8::5]:4001')).toBe(true)
})

test('admin.allowedHosts: a name with any of the ports, or with the one it names', () => {
  const own = createHostCheck({ address: at('127.0.0.1'), allowedHosts: ['Admin.Example', 'proxy.example:8443'] })
  expect(own('admin.example')).toBe(true)
  expect(own('admin.example:4001')).toBe(true)
  expect(own('admin.example:4002')).toBe(false)
  expect(own('proxy.example:8443')).toBe(true)
  expect(own('proxy.example')).toBe(false)
  expect(own('proxy.example:4001')).toBe(false)
})

test('before the port listens, nothing passes but a request without a Host', () => {
  const own = createHostCheck({ address: () => null })
  expect(own('localhost')).toBe(false)
  expect(own(undefined)).toBe(true)
})

test('splitHost: name and port, IPv6 in brackets only', () => {
  expect(splitHost('[::1]:4001')).toEqual({ name: '::1', port: 4001 })
  expect(splitHost('[::1]')).toEqual({ name: '::1', port: null })
  expect(splitHost('::1')).toBeNull()
  expect(splitHost('[nothex]:1')).toBeNull()
  expect(splitHost('a.b:123456')).toBeNull()
})
