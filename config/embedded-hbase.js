'use strict'

// The one hook from the product into the tools: when no HBase address is configured, `npm start`
// runs the local development HBase of this checkout (tools/dev-hbase: Maven Central artifacts,
// one JVM), and the CLI looks for it. Production sets BEACON_HBASE_BOOTSTRAP and never loads the
// tool: it is required here, lazily, and nowhere else in the product.

/** @returns {any} the dev-HBase tool's entry (a big tree of modules: loaded only when asked) */
function devHBase () {
  return require('../tools/dev-hbase')
}

/**
 * Starts the local HBase if it is not running (creating beacon's tables with the sink's
 * retention as their TTL; an existing table keeps its own) and returns where it serves.
 * @param {Readonly<Record<string, any>>} settings validated (config/load.js)
 * @param {(line: string) => void} log
 * @returns {Promise<string[]>} its bootstrap addresses
 */
async function startEmbeddedHBase (settings, log) {
  const tool = devHBase()
  const hbaseSink = Object.values(settings.logSinks).find((s) => s.type === 'hbase')
  const options = tool.resolveOptions({
    configTable: settings.hbase.configTable,
    ...(hbaseSink
      ? {
          accessLogTable: hbaseSink.table,
          rollupTable: hbaseSink.rollupTable,
          accessLogRetention: hbaseSink.retention,
          rollupRetention: hbaseSink.rollupRetention
        }
      : {})
  })
  const info = await tool.up(options, { log })
  return info.bootstrap
}

/**
 * Whether the local HBase of this checkout runs and serves, without starting it.
 * @returns {Promise<{ running: boolean, serving: boolean, bootstrap: string[] }>}
 */
async function embeddedHBaseStatus () {
  const tool = devHBase()
  return tool.status(tool.resolveOptions())
}

module.exports = { startEmbeddedHBase, embeddedHBaseStatus }
