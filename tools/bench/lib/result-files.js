'use strict'

const fs = require('node:fs')
const path = require('node:path')
const { execFileSync } = require('node:child_process')
const { timestampForFile } = require('./machine')

/**
 * The commit the tree is at, with " (dirty)" when it has uncommitted changes; "unknown" outside git.
 * @param {string} [cwd]
 * @returns {string}
 */
function commitOf (cwd = path.join(__dirname, '..')) {
  const git = (args) => execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
  try {
    const head = git(['rev-parse', 'HEAD'])
    return git(['status', '--porcelain']) ? `${head} (dirty)` : head
  } catch {
    return 'unknown'
  }
}

/**
 * The command line that ran this process, as one could type it again.
 * @param {string[]} [argv]
 * @returns {string}
 */
function commandOf (argv = process.argv) {
  const [node, script, ...rest] = argv
  const rel = script ? path.relative(process.cwd(), script) || script : ''
  return [path.basename(node || 'node'), rel, ...rest].filter(Boolean)
    .map((a) => /^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`).join(' ')
}

/**
 * The lines every report starts with: the command that made it and the commit it ran at.
 * @param {{ command: string, commit: string }} provenance
 * @returns {string}
 */
function provenanceHeader ({ command, commit }) {
  return `> Command: \`${command}\`  \n> Commit: \`${commit}\`\n\n`
}

/**
 * Writes a bench's result: the JSON at `out` (by default tools/bench/results/<time>-<name>.json) and
 * its markdown beside it (the same name, `.md`), and prints the markdown. Both name the command
 * line and the commit (`provenance` in the JSON, a header atop the markdown).
 * @param {{ out?: string, name: string, report: object, markdown: string,
 *   provenance?: { command: string, commit: string } }} result
 * @returns {string} the JSON file written
 */
function writeResult ({ out, name, report, markdown, provenance = { command: commandOf(), commit: commitOf() } }) {
  const file = out || path.join(__dirname, '..', 'results', `${timestampForFile()}-${name}.json`)
  const text = provenanceHeader(provenance) + markdown
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, JSON.stringify({ provenance, ...report }, null, 2) + '\n')
  fs.writeFileSync(file.replace(/\.json$/, '') + '.md', text)
  console.log(text)
  return file
}

module.exports = { writeResult, commitOf, commandOf, provenanceHeader }
