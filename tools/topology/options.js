'use strict'

const os = require('node:os')

/** The three machines of the seed benchmark, in the order they are set up and reported. */
const HOSTS = Object.freeze(['app', 'mon', 'hbase'])

/**
 * Hosts a topology has only when asked (`extraHosts`, BEACON_TOPOLOGY_EXTRA_HOSTS): a second app
 * host and a load balancer in front of both (tools/lb), for the app tier's scale-out.
 */
const OPTIONAL_HOSTS = Object.freeze(['app2', 'lb'])

// Offsets of the default addresses inside the subnet: 198.18.0.0/24 -> .1, .10, .11, .20, .30, .40.
const OFFSETS = Object.freeze({ bridge: 1, app: 10, app2: 11, mon: 20, hbase: 30, lb: 40 })

/**
 * A host's address when there are no namespaces: 127.0.0.1 for the seed's three (they never
 * bind the same port), 127.0.0.<its offset> for the optional ones, so that two app hosts can
 * use the same ports on one loopback interface as they would on two machines (Linux routes all
 * of 127.0.0.0/8 to `lo`).
 * @param {string} host
 * @returns {string}
 */
function loopbackAddress (host) {
  return OPTIONAL_HOSTS.includes(host) ? `127.0.0.${OFFSETS[host]}` : '127.0.0.1'
}

// The kernel's IFNAMSIZ is 16 bytes including the terminating NUL.
const MAX_IFNAME = 15

// The interface inside every namespace. Namespaces have their own interface names, so each host
// gets an `eth0` like a VM would; it disappears with its namespace.
const INNER_IFNAME = 'eth0'

/**
 * Options for one emulated topology: explicit overrides, else environment, else defaults.
 * 198.18.0.0/15 is RFC 2544's range for benchmarking networks: never routed on the internet and
 * unlikely to clash with a real LAN on the machine.
 * @param {{ prefix?: string, subnet?: string, bridgeAddress?: string, extraHosts?: string[],
 *   addresses?: Partial<Record<string, string>>,
 *   pins?: Partial<Record<string, string|null>> }} [overrides] extraHosts: optional hosts to
 *   add to app, mon and hbase (of OPTIONAL_HOSTS: app2, lb)
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {Readonly<{ prefix: string, subnet: string, network: string, prefixLength: number,
 *   bridge: string, bridgeAddress: string, innerIfname: string, hostNames: readonly string[],
 *   hosts: Readonly<Record<string, Readonly<{ name: string, netns: string, veth: string, address: string, loopback: string,
 *     pin: string|null }>>> }>}
 *   hostNames: every host of this topology, the seed's three first
 */
function resolveOptions (overrides = {}, env = process.env) {
  const known = ['prefix', 'subnet', 'bridgeAddress', 'extraHosts', 'addresses', 'pins']
  for (const key of Object.keys(overrides)) {
    if (!known.includes(key)) throw new TypeError(`topology options: unknown option "${key}" (known: ${known.join(', ')})`)
  }
  const pick = (value, envName, def) => {
    if (value !== undefined) return { raw: value, source: 'option' }
    if (env[envName] !== undefined && env[envName] !== '') return { raw: env[envName], source: envName }
    return { raw: def, source: `default of ${envName}` }
  }

  const prefix = parsePrefix(pick(overrides.prefix, 'BEACON_TOPOLOGY_PREFIX', 'beacon_'))
  const subnetPick = pick(overrides.subnet, 'BEACON_TOPOLOGY_SUBNET', '198.18.0.0/24')
  const { network, prefixLength } = parseSubnet(subnetPick)
  const addressIn = (key, value, envName) => {
    const def = OFFSETS[key] < 2 ** (32 - prefixLength) - 1 ? intToIp(network + OFFSETS[key]) : undefined
    const picked = pick(value, envName, def)
    if (picked.raw === undefined) {
      throw new RangeError(`topology options: ${subnetPick.raw} is too small for the default address of ${key}; set ${envName}`)
    }
    return parseHostAddress(picked, network, prefixLength)
  }

  const bridgeAddress = addressIn('bridge', overrides.bridgeAddress, 'BEACON_TOPOLOGY_BRIDGE_ADDR')
  const hostNames = Object.freeze([...HOSTS, ...parseExtraHosts(pick(overrides.extraHosts, 'BEACON_TOPOLOGY_EXTRA_HOSTS', []))])
  const hosts = {}
  const seen = new Map([[bridgeAddress, 'bridge']])
  for (const name of hostNames) {
    const upper = name.toUpperCase()
    const address = addressIn(name, overrides.addresses?.[name], `BEACON_TOPOLOGY_${upper}_ADDR`)
    if (seen.has(address)) throw new RangeError(`topology options: ${name} and ${seen.get(address)} both have address ${address}`)
    seen.set(address, name)
    const pinPick = overrides.pins && Object.hasOwn(overrides.pins, name)
      ? { raw: overrides.pins[name], source: `option pins.${name}` }
      : pick(undefined, `BEACON_PIN_${upper}`, null)
    hosts[name] = Object.freeze({
      name,
      netns: prefix + name,
      veth: checkIfname(prefix + name, prefix),
      address,
      loopback: loopbackAddress(name),
      pin: parseCpuList(pinPick)
    })
  }

  return Object.freeze({
    prefix,
    subnet: `${intToIp(network)}/${prefixLength}`,
    network: intToIp(network),
    prefixLength,
    bridge: checkIfname(prefix + 'br0', prefix),
    bridgeAddress,
    innerIfname: INNER_IFNAME,
    hostNames,
    hosts: Object.freeze(hosts)
  })
}

/** "app2,lb" or ["app2", "lb"]: optional hosts, each once, in OPTIONAL_HOSTS order. */
function parseExtraHosts ({ raw, source }) {
  const names = (Array.isArray(raw) ? raw : String(raw).split(',')).map((s) => String(s).trim()).filter(Boolean)
  for (const name of names) {
    if (!OPTIONAL_HOSTS.includes(name)) {
      throw new TypeError(`topology options: ${source}: unknown optional host ` +
        `${JSON.stringify(name)} (optional hosts: ${OPTIONAL_HOSTS.join(', ')})`)
    }
  }
  return OPTIONAL_HOSTS.filter((name) => names.includes(name))
}

function parsePrefix ({ raw, source }) {
  const s = String(raw)
  // Everything the module creates or removes is found by this prefix, so it must stay ours.
  if (!/^beacon_[a-z0-9_]{0,3}$/.test(s)) {
    throw new TypeError(`topology options: ${source}=${JSON.stringify(s)} must be "beacon_" followed by at most 3 of [a-z0-9_]`)
  }
  return s
}

function checkIfname (name, prefix) {
  if (name.length > MAX_IFNAME) {
    throw new RangeError(`topology options: prefix "${prefix}" makes interface name ${name} longer than ${MAX_IFNAME} characters`)
  }
  return name
}

function parseSubnet ({ raw, source }) {
  const m = /^(\d+\.\d+\.\d+\.\d+)\/(\d+)$/.exec(String(raw).trim())
  const ip = m && ipToInt(m[1])
  const prefixLength = m && Number(m[2])
  if (ip === null || ip === undefined || !(prefixLength >= 8 && prefixLength <= 29)) {
    throw new TypeError(`topology options: ${source}=${JSON.stringify(raw)} is not an IPv4 subnet like 198.18.0.0/24 (prefix length 8..29)`)
  }
  const mask = maskOf(prefixLength)
  if ((ip & mask) >>> 0 !== ip) {
    throw new RangeError(`topology options: ${source}=${raw} has host bits ` +
      `set; did you mean ${intToIp((ip & mask) >>> 0)}/${prefixLength}?`)
  }
  return { network: ip, prefixLength }
}

function parseHostAddress ({ raw, source }, network, prefixLength) {
  const ip = ipToInt(String(raw).trim())
  if (ip === null) throw new TypeError(`topology options: ${source}=${JSON.stringify(raw)} is not an IPv4 address`)
  const size = 2 ** (32 - prefixLength)
  if (ip < network || ip >= network + size) {
    throw new RangeError(`topology options: ${source}=${raw} is outside the subnet ${intToIp(network)}/${prefixLength}`)
  }
  if (ip === network || ip === network + size - 1) {
    throw new RangeError(`topology options: ${source}=${raw} is the network or broadcast address`)
  }
  return intToIp(ip)
}

/** taskset's cpu-list syntax: "0", "1,3", "0-1". Checked against this machine's CPU count. */
function parseCpuList ({ raw, source }) {
  if (raw === null || raw === undefined || raw === '') return null
  const s = String(raw).trim()
  if (!/^\d+(-\d+)?(,\d+(-\d+)?)*$/.test(s)) {
    throw new TypeError(`topology options: ${source}=${JSON.stringify(raw)} is not a cpu list like "0", "0-1" or "0,2"`)
  }
  const cpus = os.availableParallelism()
  for (const part of s.split(',')) {
    const [lo, hi = lo] = part.split('-').map(Number)
    if (lo > hi) throw new RangeError(`topology options: ${source}=${s}: range ${part} is reversed`)
    if (hi >= cpus) throw new RangeError(`topology options: ${source}=${s}: this machine has CPUs 0-${cpus - 1}`)
  }
  return s
}

function maskOf (prefixLength) {
  return prefixLength === 0 ? 0 : (0xffffffff << (32 - prefixLength)) >>> 0
}

/** @returns {number|null} */
function ipToInt (s) {
  const parts = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s)
  if (!parts) return null
  let n = 0
  for (let i = 1; i <= 4; i++) {
    const octet = Number(parts[i])
    if (octet > 255) return null
    n = n * 256 + octet
  }
  return n
}

function intToIp (n) {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.')
}

/**
 * Whether two IPv4 prefixes overlap ("a.b.c.d" alone is a /32).
 * @param {string} a
 * @param {string} b
 */
function overlaps (a, b) {
  const parse = (s) => {
    const [ip, len = '32'] = s.split('/')
    return { ip: ipToInt(ip), len: Number(len) }
  }
  const x = parse(a)
  const y = parse(b)
  if (x.ip === null || y.ip === null) return false
  const mask = maskOf(Math.min(x.len, y.len))
  return ((x.ip & mask) >>> 0) === ((y.ip & mask) >>> 0)
}

module.exports = { resolveOptions, overlaps, loopbackAddress, HOSTS, OPTIONAL_HOSTS }
