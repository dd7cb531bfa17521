'use strict'

// The shell examples a reader copies out of README.md and docs/: every line of a fenced block
// that starts with `npx beacon` or `curl` (or `$ ` and one of them, followed by the output the page
// shows), and the README's inline `curl …` / `npx beacon …` spans. test/docs/examples.test.js runs
// them against a real beacon.

const fs = require('node:fs')
const path = require('node:path')

const ROOT = path.join(__dirname, '..', '..')
const COMMAND = /^(?:\$ )?((?:npx beacon|curl)(?: .*)?)$/
// A syntax summary rather than a command: <placeholders>, a|b alternatives, [optional] parts,
// FILE/DIR names to fill in.
const SYNTAX = /<[^>]+>|\S\|\S|\[[^\]]*\]|\b(?:DIR|FILE|ID|T)\b/

/**
 * @typedef {object} DocExample
 * @property {string} file relative to the repository
 * @property {number} line 1-based
 * @property {string} command as written, without its `$ ` and its trailing `# comment`
 * @property {string} comment the trailing comment, '' if none
 * @property {string[]} output the lines the page shows after a `$ ` command ([] if none)
 * @property {boolean} syntax a summary with placeholders, not meant to run as written
 */

/**
 * Splits `npx beacon x --y  # what it does` into the command and its comment (a ` # ` outside
 * quotes; URLs have no spaces).
 * @param {string} text
 * @returns {{ command: string, comment: string }}
 */
function splitComment (text) {
  const at = text.search(/\s+#\s/)
  if (at < 0) return { command: text.trim(), comment: '' }
  return { command: text.slice(0, at).trim(), comment: text.slice(at).replace(/^\s+#\s+/, '').trim() }
}

/**
 * The examples of one markdown file, in page order.
 * @param {string} file relative to the repository
 * @param {{ inline?: boolean }} [options] inline: also `curl …` / `npx beacon …` code spans of the prose
 * @returns {DocExample[]}
 */
function examplesOf (file, { inline = false } = {}) {
  const lines = fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n')
  /** @type {DocExample[]} */
  const found = []
  let fenced = false
  /** @type {DocExample|null} */
  let shown = null // the last `$ ` command, collecting its output
  lines.forEach((text, i) => {
    if (/^\s*```/.test(text)) {
      fenced = !fenced
      shown = null
      return
    }
    if (!fenced) {
      if (!inline) return
      for (const [, span] of text.matchAll(/`((?:npx beacon|curl) [^`]+)`/g)) {
        found.push({ file, line: i + 1, command: span, comment: '', output: [], syntax: SYNTAX.test(span) })
      }
      return
    }
    const match = COMMAND.exec(text.trim())
    if (!match) {
      if (shown && text.trim() !== '') shown.output.push(text)
      return
    }
    const { command, comment } = splitComment(match[1])
    const example = { file, line: i + 1, command, comment, output: [], syntax: SYNTAX.test(command) }
    found.push(example)
    shown = text.trim().startsWith('$ ') ? example : null
  })
  return found
}

/**
 * Every example of README.md (fenced and inline) and of docs/*.md (fenced), in page order.
 * @returns {DocExample[]}
 */
function docExamples () {
  const docs = fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort()
  return [
    ...examplesOf('README.md', { inline: true }),
    ...docs.flatMap((f) => examplesOf(path.join('docs', f)))
  ]
}

/**
 * A line's shape: times, numbers and runs of spaces made alike, a plural after a number made
 * singular, so that output of other data compares with the page's.
 * @param {string} line
 * @returns {string}
 */
function shapeOf (line) {
  return line
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?Z/g, '<time>')
    .replace(/\d+(\.\d+)?/g, '<n>')
    .replace(/<n> (\w+?)s\b/g, '<n> $1')
    .replace(/\s+/g, ' ')
    .trim()
}

/**
 * The part of a line's shape that every such answer has: up to a `;` or ` (` that adds a detail
 * only some answers carry (a minute still being counted, a settings note).
 * @param {string} line
 * @returns {string}
 */
function headOf (line) {
  return shapeOf(line).split(/;| \(/)[0].trim()
}

module.exports = { docExamples, examplesOf, splitComment, shapeOf, headOf }
