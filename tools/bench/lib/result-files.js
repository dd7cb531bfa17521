'use strict'

const fs = require('node:fs')
const path = require('node:path')
const { timestampForFile } = require('./machine')

/**
 * Writes a bench's result: the JSON at `out` (by default tools/bench/results/<time>-<name>.json) and
 * its markdown beside it (the same name, `.md`), and prints the markdown.
 * @param {{ out?: string, name: string, report: object, markdown: string }} result
 * @returns {string} the JSON file written
 */
function writeResult ({ out, name, report, markdown }) {
  const file = out || path.join(__dirname, '..', 'results', `${timestampForFile()}-${name}.json`)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, JSON.stringify(report, null, 2) + '\n')
  fs.writeFileSync(file.replace(/\.json$/, '') + '.md', markdown)
  console.log(markdown)
  return file
}

module.exports = { writeResult }
