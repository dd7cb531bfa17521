#!/usr/bin/env node
'use strict'

/**
 * Admin CLI over the admin HTTP API (so it works against any running beacon, local or remote):
 *
 *   npx beacon config get <id>
 *   npx beacon config set <id> '<json>' | @file.json
 *   npx beacon config delete <id>
 *   npx beacon config list [--start <id>] [--limit <n>]
 *   npx beacon endpoint enable|disable <name>
 *   npx beacon endpoint list
 *
 * Environment: BEACON_ADMIN_URL (default http://127.0.0.1:$ADMIN_PORT or :4001),
 * BEACON_ADMIN_TOKEN (required).
 */

const fs = require('node:fs')
const { parseArgs } = require('node:util')
const { DEFAULTS } = require('../config/defaults')

const USAGE = `usage:
  beacon config get <id>
  beacon config set <id> '<json>' | @file.json
  beacon config delete <id>
  beacon config list [--start <id>] [--limit <n>]
  beacon endpoint enable|disable <name>
  beacon endpoint list
env: BEACON_ADMIN_URL (default http://127.0.0.1:${DEFAULTS.adminPort}), BEACON_ADMIN_TOKEN`

async function call (method, path, body) {
  const base = process.env.BEACON_ADMIN_URL || `http://127.0.0.1:${process.env.ADMIN_PORT || DEFAULTS.adminPort}`
  const token = process.env.BEACON_ADMIN_TOKEN
  if (!token) throw new Error('BEACON_ADMIN_TOKEN is not set')
  const res = await fetch(new URL(path, base), {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
    body: body !== undefined ? body : undefined,
    signal: AbortSignal.timeout(10000)
  })
  const text = await res.text()
  if (!res.ok) {
    let message = text
    try { message = JSON.parse(text).error.message } catch {}
    throw new Error(`${res.status}: ${message}`)
  }
  return text ? JSON.parse(text) : null
}

async function main (argv) {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { start: { type: 'string' }, limit: { type: 'string' } } })
  const [area, action, target, value] = positionals
  const id = target && encodeURIComponent(target)
  if (area === 'config' && action === 'get' && target) return call('GET', `/admin/config/${id}`)
  if (area === 'config' && action === 'delete' && target) {
    await call('DELETE', `/admin/config/${id}`)
    return { id: target, deleted: true }
  }
  if (area === 'config' && action === 'set' && target && value) {
    const json = value.startsWith('@') ? fs.readFileSync(value.slice(1), 'utf8') : value
    JSON.parse(json) // fail here, with a local message, on malformed JSON
    return call('PUT', `/admin/config/${id}`, json)
  }
  if (area === 'config' && action === 'list') {
    const q = new URLSearchParams()
    if (values.start) q.set('start', values.start)
    if (values.limit) q.set('limit', values.limit)
    return call('GET', `/admin/config?${q}`)
  }
  if (area === 'endpoint' && action === 'list') return call('GET', '/admin/endpoints')
  if (area === 'endpoint' && (action === 'enable' || action === 'disable') && target) {
    return call('PUT', `/admin/endpoints/${id}`, JSON.stringify({ enabled: action === 'enable' }))
  }
  throw new Error(USAGE)
}

if (require.main === module) {
  main(process.argv.slice(2)).then((out) => {
    if (out !== undefined && out !== null) console.log(JSON.stringify(out, null, 2))
  }, (err) => {
    console.error(`beacon: ${err.message}`)
    process.exit(1)
  })
}

module.exports = { main }
