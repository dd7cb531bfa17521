'use strict'

const net = require('node:net')

/**
 * Ports the OS says are free now (each bound to port 0, then released), so a test's servers
 * never collide with another test run or a developer's running beacon.
 * @param {number} count
 * @returns {Promise<number[]>}
 */
async function freePorts (count) {
  const servers = await Promise.all(Array.from({ length: count }, () => new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve(server))
  })))
  const ports = servers.map((s) => /** @type {net.AddressInfo} */ (s.address()).port)
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))))
  return ports
}

module.exports = { freePorts }
