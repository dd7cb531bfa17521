'use strict'

const fs = require('node:fs')

/**
 * Prints a fault test's measurements and, when BEACON_FAULT_REPORT names a file, appends them to
 * it as one JSON line: the bench's `faults` scenario runs the long versions of these tests and
 * builds its report from that file (tools/bench/lib/faults.js).
 * @param {string} name the test's key in the report (e.g. 'memory', 'slow')
 * @param {string} text what a person reads in the test output
 * @param {object} data the figures behind it
 * @returns {void}
 */
function reportFault (name, text, data) {
  console.log(text)
  const file = process.env.BEACON_FAULT_REPORT
  if (file) fs.appendFileSync(file, JSON.stringify({ name, ...data }) + '\n')
}

module.exports = { reportFault }
