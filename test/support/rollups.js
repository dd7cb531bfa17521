'use strict'

// For fault tests: once the load has stopped and the log has drained, count every marked minute
// (a roller of the test's own, its clock two minutes ahead so the minute in progress is due too)
// and compare the rollups with a scan of the raw rows.

const { createHBaseClient } = require('@beacon/hbase-client')
const { SINK_DEFAULTS } = require('../../config/defaults')
const { createRoller } = require('../../logging/rollup/roller')
const { checkRollups } = require('../../logging/rollup/read')

/**
 * @param {{ bootstrap: string[], logTable: string, from: number, to?: number, rollupTable?: string, buckets?: number }} where
 * @returns {Promise<{ minutes: number, rows: number, marked: number[], differences: any[], rolled: number }>}
 */
async function rollupsAgainstRaw ({
  bootstrap, logTable, from, to = Date.now(), rollupTable = SINK_DEFAULTS.hbase.rollupTable, buckets = SINK_DEFAULTS.hbase.buckets
}) {
  const client = createHBaseClient({ bootstrap })
  try {
    const roller = createRoller({ client, logTable, rollupTable, buckets, settleMs: 0, clock: { now: () => Date.now() + 120000 } })
    let rolled = 0
    for (let n = await roller.runOnce(); n > 0; n = await roller.runOnce()) rolled += n
    const { lastError } = roller.stats()
    if (lastError) throw new Error(`the rollup job failed: ${lastError}`)
    return { ...await checkRollups({ client, rollupTable, logTable, buckets }, from, to), rolled }
  } finally {
    await client.close()
  }
}

module.exports = { rollupsAgainstRaw }
