'use strict'

/**
 * The seed benchmark's three machines (app server, monitoring/load node, HBase server) emulated
 * on one Linux host: a network namespace per machine, each with a veth "cable" to one bridge in
 * the root namespace, on a private benchmarking subnet (198.18.0.0/24 by default). Nothing is
 * routed anywhere else: the namespaces get no default route and no NAT, and the root namespace's
 * forwarding setting is left alone.
 *
 * Everything created is named with the `beacon_` prefix, and removal only ever looks at names
 * with that prefix, so `down()` also clears what a crashed run left behind.
 */

const fs = require('node:fs')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { setTimeout: sleep } = require('node:timers/promises')
const { resolveOptions, overlaps, loopbackAddress, HOSTS, OPTIONAL_HOSTS } = require('./options')
const { createIp } = require('./ip')
const { createDelayProxy } = require('./delay-proxy')
const { verifyHosts, probeNetemOn } = require('./verify')
const { stopProcesses } = require('./stop-processes')

const NETNS_DIR = '/var/run/netns' // iproute2's NETNS_RUN_DIR
const VERIFY_TIMEOUT_MS = 10000
const DOWN_SETTLE_MS = 5000
const noop = () => {}

/**
 * @typedef {{ mode: 'netns'|'loopback', hosts: Record<string, string>,
 *   reason: string|null, bridge: { name: string, address: string }|null,
 *   namespaces: Record<string, string>|null, netem: { available: boolean, reason: string|null },
 *   verified: Array<{ from: string, to: string, rttMs: number }>, actions: string[] }} UpResult
 */

/**
 * @param {Parameters<typeof resolveOptions>[0]} [overrides] prefix, subnet, extraHosts, addresses, pins
 * @param {{ env?: NodeJS.ProcessEnv, ipPath?: string, tcPath?: string, tasksetPath?: string,
 *   nodePath?: string, log?: (line: string) => void }} [io]
 */
function createTopology (overrides = {}, io = {}) {
  const {
    env = process.env,
    ipPath = 'ip',
    tcPath = 'tc',
    tasksetPath = 'taskset',
    nodePath = process.execPath,
    log = noop
  } = io
  const opts = resolveOptions(overrides, env)
  const ip = createIp({ ipPath })
  /** 'netns' | 'loopback' once up() decided; before that exec() assumes netns. */
  /** @type {'netns'|'loopback'|null} */
  let mode = null
  let availability = null

  function hostOf (host) {
    if (!Object.hasOwn(opts.hosts, host)) {
      throw new TypeError(`topology: unknown host ${JSON.stringify(host)} (hosts: ${opts.hostNames.join(', ')})`)
    }
    return opts.hosts[host]
  }

  /**
   * Whether network namespaces can be used here: Linux, root, `ip` present, and a probe
   * namespace can be created and entered. Cached per topology.
   * @returns {Promise<{ available: boolean, reason: string|null }>}
   */
  function available () {
    availability ??= probeAvailability()
    return availability
  }

  async function probeAvailability () {
    const no = (reason) => ({ available: false, reason })
    if (process.platform !== 'linux') return no(`network namespaces need Linux (this is ${process.platform})`)
    if (process.getuid() !== 0) return no(`network namespaces need root (running as uid ${process.getuid()})`)
    try {
      await ip.run(['-V'])
    } catch (err) {
      return no(err.code === 'ENOENT' ? `${ipPath} (iproute2) not found` : `${ipPath} -V failed: ${err.message}`)
    }
    const probe = `${opts.prefix}probe${process.pid}`
    try {
      await ip.run(['netns', 'add', probe])
      await ip.run(['netns', 'exec', probe, nodePath, '-e', ''])
    } catch (err) {
      return no(`cannot create and enter a network namespace: ${err.message}`)
    } finally {
      await ip.runIgnoringMissing(['netns', 'del', probe]).catch(noop)
    }
    return { available: true, reason: null }
  }

  /**
   * Creates (or repairs) the namespaces, veths, bridge and addresses, then checks a real TCP
   * round trip between every ordered pair of hosts. Idempotent: a second call changes nothing
   * (`actions` is empty) but still verifies.
   * @param {{ allowFallback?: boolean, verify?: boolean, verifyTimeoutMs?: number }} [options]
   *   allowFallback: when namespaces are unavailable, return loopback mode (with the reason)
   *   instead of throwing
   * @returns {Promise<UpResult>}
   */
  async function up ({ allowFallback = false, verify = true, verifyTimeoutMs = VERIFY_TIMEOUT_MS } = {}) {
    const { available: ok, reason } = await available()
    if (!ok) {
      if (!allowFallback) throw new Error(`topology: network namespaces are not available: ${reason}`)
      mode = 'loopback'
      log(`topology: loopback mode (${reason})`)
      return {
        mode,
        hosts: Object.fromEntries(opts.hostNames.map((h) => [h, opts.hosts[h].loopback])),
        reason,
        bridge: null,
        namespaces: null,
        netem: { available: false, reason: 'loopback mode: no per-host links to shape' },
        verified: [],
        actions: []
      }
    }

    const actions = []
    const act = async (description, args, where) => {
      log(`topology: ${description}`)
      actions.push(description)
      await ip.run(args, where)
    }
    await checkSubnetIsFree()
    let rootLinks = await ip.links()
    await ensureBridge(rootLinks, act)
    const namespaces = await ip.netnsList()
    rootLinks = await ip.links()
    for (const name of opts.hostNames) await ensureHost(opts.hosts[name], rootLinks, namespaces, act)
    mode = 'netns'

    const verified = verify ? await verifyConnectivity(verifyTimeoutMs) : []
    return {
      mode,
      hosts: Object.fromEntries(opts.hostNames.map((h) => [h, opts.hosts[h].address])),
      reason: null,
      bridge: { name: opts.bridge, address: opts.bridgeAddress },
      namespaces: Object.fromEntries(opts.hostNames.map((h) => [h, opts.hosts[h].netns])),
      netem: await probeNetem(),
      verified,
      actions
    }
  }

  // Another interface (a real LAN, a VPN, another topology with a different prefix) already
  // using the subnet would make routing ambiguous: refuse rather than shadow it.
  async function checkSubnetIsFree () {
    for (const route of await ip.routes()) {
      if (route.dst === 'default' || route.dev === opts.bridge) continue
      if (overlaps(route.dst, opts.subnet)) {
        throw new Error(`topology: the subnet ${opts.subnet} overlaps the route ${route.dst} on ${route.dev}; choose another with BEACON_TOPOLOGY_SUBNET`)
      }
    }
  }

  async function ensureBridge (rootLinks, act) {
    let bridge = rootLinks.find((l) => l.ifname === opts.bridge)
    if (bridge && bridge.linkinfo?.info_kind !== 'bridge') {
      await act(`delete ${opts.bridge} (a ${bridge.linkinfo?.info_kind} link, not a bridge)`, ['link', 'del', opts.bridge])
      bridge = undefined
    }
    if (!bridge) await act(`add bridge ${opts.bridge}`, ['link', 'add', opts.bridge, 'type', 'bridge'])
    await ensureAddress(opts.bridge, opts.bridgeAddress, undefined, act)
    if (!bridge?.flags?.includes('UP')) await act(`set ${opts.bridge} up`, ['link', 'set', opts.bridge, 'up'])
  }

  async function ensureHost (host, rootLinks, namespaces, act) {
    const where = { netns: host.netns }
    if (!namespaces.includes(host.netns)) await act(`add netns ${host.netns}`, ['netns', 'add', host.netns])
    const outer = rootLinks.find((l) => l.ifname === host.veth)
    const innerLinks = await ip.links(where)
    const inner = innerLinks.find((l) => l.ifname === opts.innerIfname)
    const paired = outer && inner &&
      outer.linkinfo?.info_kind === 'veth' && inner.linkinfo?.info_kind === 'veth' &&
      outer.link_index === inner.ifindex && inner.link_index === outer.ifindex
    if (!paired) {
      // Half a pair (a crash between steps, or someone's manual edits): start this host's cable over.
      if (outer) await act(`delete stale ${host.veth}`, ['link', 'del', host.veth])
      if (inner) await act(`delete stale ${opts.innerIfname} in ${host.netns}`, ['link', 'del', opts.innerIfname], where)
      await act(`add veth ${host.veth} <-> ${host.netns}:${opts.innerIfname}`,
        ['link', 'add', host.veth, 'type', 'veth', 'peer', 'name', opts.innerIfname, 'netns', host.netns])
    }
    if (!paired || outer.master !== opts.bridge || !outer.flags.includes('UP')) {
      await act(`attach ${host.veth} to ${opts.bridge}`, ['link', 'set', host.veth, 'master', opts.bridge, 'up'])
    }
    const lo = innerLinks.find((l) => l.ifname === 'lo')
    if (!lo?.flags?.includes('UP')) await act(`set lo up in ${host.netns}`, ['link', 'set', 'lo', 'up'], where)
    await ensureAddress(opts.innerIfname, host.address, host.netns, act)
    if (!paired || !inner.flags.includes('UP')) {
      await act(`set ${opts.innerIfname} up in ${host.netns}`, ['link', 'set', opts.innerIfname, 'up'], where)
    }
    // The only route a host may have is its own subnet: no default route, so nothing can leave.
    for (const route of await ip.routes(where)) {
      if (route.dst === opts.subnet && route.dev === opts.innerIfname) continue
      await act(`delete route ${route.dst} in ${host.netns}`,
        ['route', 'del', route.dst, ...(route.gateway ? ['via', route.gateway] : []), ...(route.dev ? ['dev', route.dev] : [])], where)
    }
  }

  async function ensureAddress (dev, address, netns, act) {
    const where = netns ? { netns } : undefined
    const wanted = `${address}/${opts.prefixLength}`
    const infos = ((await ip.addresses(dev, where))[0]?.addr_info || []).filter((a) => a.family === 'inet')
    let present = false
    for (const info of infos) {
      const cidr = `${info.local}/${info.prefixlen}`
      if (cidr === wanted) present = true
      else await act(`remove ${cidr} from ${dev}${netns ? ` in ${netns}` : ''}`, ['addr', 'del', cidr, 'dev', dev], where)
    }
    if (!present) await act(`address ${wanted} on ${dev}${netns ? ` in ${netns}` : ''}`, ['addr', 'add', wanted, 'dev', dev], where)
  }

  /** @param {number} timeoutMs */
  function verifyConnectivity (timeoutMs) {
    return verifyHosts({ opts, exec, nodePath, timeoutMs, log })
  }

  function probeNetem () {
    return probeNetemOn(opts.hosts[HOSTS[0]].veth, tcPath)
  }

  /**
   * Removes every namespace and link whose name starts with the prefix, including leftovers of
   * a crashed run. Never touches anything else.
   * @param {{ force?: boolean }} [options] force: SIGTERM (then SIGKILL) processes still running
   *   inside the namespaces; without it their presence is an error
   * @returns {Promise<{ namespaces: string[], links: string[], killed: number[] }>} what was removed
   */
  async function down ({ force = false } = {}) {
    const { available: ok } = await available()
    if (!ok) {
      mode = null
      return { namespaces: [], links: [], killed: [] }
    }
    const mine = (name) => typeof name === 'string' && name.startsWith(opts.prefix)
    const namespaces = (await ip.netnsList()).filter(mine)
    const running = []
    for (const netns of namespaces) {
      for (const pid of await ip.pids(netns).catch(() => [])) running.push({ netns, pid })
    }
    let killed = []
    if (running.length) {
      const list = running.map((r) => `${r.pid} (${r.netns})`).join(', ')
      if (!force) throw new Error(`topology: processes still run inside the namespaces: ${list}; stop them, or use down({ force: true }) / \`down --force\``)
      log(`topology: stopping ${list}`)
      killed = await stopProcesses(running.map((r) => r.pid))
    }

    const links = (await ip.links()).filter((l) => mine(l.ifname))
    // Veths first: deleting the outer end removes its peer inside the namespace.
    for (const link of links.filter((l) => l.linkinfo?.info_kind === 'veth')) await ip.runIgnoringMissing(['link', 'del', link.ifname])
    for (const netns of namespaces) await ip.runIgnoringMissing(['netns', 'del', netns])
    for (const link of links.filter((l) => l.linkinfo?.info_kind !== 'veth')) await ip.runIgnoringMissing(['link', 'del', link.ifname])

    // The kernel tears a namespace down asynchronously; wait until nothing of ours is listed.
    const deadline = Date.now() + DOWN_SETTLE_MS
    for (;;) {
      const leftLinks = (await ip.links()).filter((l) => mine(l.ifname)).map((l) => l.ifname)
      const leftNs = (await ip.netnsList()).filter(mine)
      if (!leftLinks.length && !leftNs.length) break
      if (Date.now() > deadline) throw new Error(`topology: still present after down: ${[...leftNs, ...leftLinks].join(', ')}`)
      for (const name of leftLinks) await ip.runIgnoringMissing(['link', 'del', name])
      for (const name of leftNs) await ip.runIgnoringMissing(['netns', 'del', name])
      await sleep(50)
    }
    mode = null
    if (namespaces.length || links.length) {
      log(`topology: removed ${[...namespaces.map((n) => `netns ${n}`), ...links.map((l) => l.ifname)].join(', ')}`)
    }
    return { namespaces, links: links.map((l) => l.ifname), killed }
  }

  /**
   * What exists now, without changing anything.
   * @returns {Promise<{ available: boolean, reason: string|null, complete: boolean, subnet: string,
   *   bridge: { name: string, address: string, exists: boolean, up: boolean, configured: boolean },
   *   hosts: Record<string, { netns: string, address: string, exists: boolean, configured: boolean, pids: number[], pin: string|null }>,
   *   others: string[] }>} others: names with the prefix that this configuration did not create
   */
  async function status () {
    const { available: ok, reason } = await available()
    const result = {
      available: ok,
      reason,
      complete: false,
      subnet: opts.subnet,
      bridge: { name: opts.bridge, address: opts.bridgeAddress, exists: false, up: false, configured: false },
      hosts: {},
      others: []
    }
    for (const name of opts.hostNames) {
      const h = opts.hosts[name]
      result.hosts[name] = { netns: h.netns, address: h.address, exists: false, configured: false, pids: [], pin: h.pin }
    }
    if (!ok) return result
    const links = await ip.links()
    const bridge = links.find((l) => l.ifname === opts.bridge)
    result.bridge.exists = Boolean(bridge)
    result.bridge.up = Boolean(bridge?.flags?.includes('UP'))
    const bridgeAddrs = bridge ? (await ip.addresses(opts.bridge))[0]?.addr_info || [] : []
    result.bridge.configured =
      result.bridge.up && bridgeAddrs.some((a) => a.local === opts.bridgeAddress && a.prefixlen === opts.prefixLength)
    const namespaces = await ip.netnsList()
    const ours = new Set([opts.bridge])
    for (const name of opts.hostNames) {
      const h = opts.hosts[name]
      const s = result.hosts[name]
      ours.add(h.netns).add(h.veth)
      s.exists = namespaces.includes(h.netns)
      if (!s.exists) continue
      const addrs = (await ip.addresses(opts.innerIfname, { netns: h.netns }).catch(() => []))[0]
      s.configured = Boolean(
        addrs?.flags?.includes('UP') &&
        addrs.addr_info?.some((a) => a.local === h.address && a.prefixlen === opts.prefixLength)
      ) &&
        links.some((l) => l.ifname === h.veth && l.master === opts.bridge)
      s.pids = await ip.pids(h.netns).catch(() => [])
    }
    result.others = [...namespaces, ...links.map((l) => l.ifname)].filter((n) => n.startsWith(opts.prefix) && !ours.has(n))
    result.complete = result.bridge.configured && opts.hostNames.every((n) => result.hosts[n].configured)
    return result
  }

  /**
   * Spawns a command "on" a host: inside its namespace (`ip netns exec beacon_<host> ...`),
   * pinned with `taskset -c` when a cpu list is configured for the host. In loopback mode it
   * runs in the root namespace (still pinned).
   * @param {string} host app, mon, hbase, or an optional host of this topology (app2, lb)
   * @param {string} command
   * @param {string[]} [args]
   * @param {import('node:child_process').SpawnOptions} [spawnOptions]
   * @returns {import('node:child_process').ChildProcess}
   */
  function exec (host, command, args = [], spawnOptions = {}) {
    const h = hostOf(host)
    const argv = [...(h.pin ? [tasksetPath, '-c', h.pin] : []), command, ...args]
    if (mode === 'loopback') return spawn(argv[0], argv.slice(1), spawnOptions)
    if (!fs.existsSync(path.join(NETNS_DIR, h.netns))) {
      throw new Error(`topology: namespace ${h.netns} does not exist; run \`node tools/topology/cli.js up\` first`)
    }
    // `ip netns exec` execs the command, so the ChildProcess pid is the command's own pid.
    return spawn(ipPath, ['netns', 'exec', h.netns, ...argv], spawnOptions)
  }

  /**
   * @param {string} host
   * @returns {string} the host's address (in loopback mode 127.0.0.1, or 127.0.0.<n> for an
   *   optional host: see loopbackAddress in options.js)
   */
  function hostAddress (host) {
    const h = hostOf(host)
    return mode === 'loopback' ? h.loopback : h.address
  }

  /**
   * @param {string} host
   * @returns {string|null} taskset cpu list from BEACON_PIN_<HOST>, or null when not pinned
   */
  function pin (host) {
    return hostOf(host).pin
  }

  return Object.freeze({
    options: opts,
    get mode () { return mode },
    available,
    up,
    down,
    status,
    exec,
    hostAddress,
    pin
  })
}

// The module-level API works on one topology configured from the environment, created on first use.
let defaultTopology = null
const topology = () => (defaultTopology ??= createTopology())

module.exports = {
  createTopology,
  createDelayProxy,
  resolveOptions,
  loopbackAddress,
  HOSTS,
  OPTIONAL_HOSTS,
  /** @type {(options?: Parameters<ReturnType<typeof createTopology>['up']>[0]) => Promise<UpResult>} */
  up: (options) => topology().up(options),
  down: (options) => topology().down(options),
  status: () => topology().status(),
  available: () => topology().available(),
  exec: (host, command, args, spawnOptions) => topology().exec(host, command, args, spawnOptions),
  hostAddress: (host) => topology().hostAddress(host),
  pin: (host) => topology().pin(host)
}
