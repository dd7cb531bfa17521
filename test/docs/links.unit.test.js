'use strict'

// Every relative link of the documentation resolves: README.md, every page under docs/,
// packages/hbase-client/README.md, the tools' READMEs and the result pages in tools/bench/results/.
// A link `[text](path)` or `[text](path#anchor)` (and an image, and a
// reference definition `[id]: path`) must name a file or folder of this repository, and an anchor
// into a markdown page (or `#anchor` alone, into the same page) must be one of that page's
// headings, slugged as GitHub does. Links to http(s): and mailto: are not checked; links inside
// code (fenced blocks, inline code) are not links.

const fs = require('node:fs')
const path = require('node:path')

const ROOT = path.join(__dirname, '..', '..')

/** The markdown files under `dir`, recursively. */
function markdownUnder (dir) {
  if (!fs.existsSync(dir)) return []
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name)
    if (e.isDirectory()) return markdownUnder(full)
    return e.isFile() && e.name.endsWith('.md') ? [full] : []
  })
}

const FILES = [
  path.join(ROOT, 'README.md'),
  ...markdownUnder(path.join(ROOT, 'docs')),
  path.join(ROOT, 'packages', 'hbase-client', 'README.md'),
  ...markdownUnder(path.join(ROOT, 'tools')).filter((f) => !f.includes(`${path.sep}java${path.sep}`))
]

/** The lines of `text` with fenced code blocks blanked out (line numbers kept). */
function withoutFences (text) {
  let fence = null
  return text.split('\n').map((line) => {
    const open = /^\s*(`{3,}|~{3,})/.exec(line)
    if (fence) {
      if (open && open[1][0] === fence[0] && open[1].length >= fence.length && line.trim() === open[1]) fence = null
      return ''
    }
    if (open) {
      fence = open[1]
      return ''
    }
    return line
  })
}

/**
 * GitHub's heading anchor: the heading's text as rendered, lower-cased, punctuation dropped
 * (letters, digits, spaces, `-` and `_` stay), each space a `-`.
 * @param {string} heading
 */
function slug (heading) {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link or image: its text
    .replace(/`([^`]*)`/g, '$1') // code spans: their content
    .replace(/(\*\*|__|\*)/g, '') // emphasis markers
    .replace(/<[^>]+>/g, '') // inline HTML
  return text.trim().toLowerCase().replace(/[^\p{L}\p{N}\p{M} _-]/gu, '').replace(/ /g, '-')
}

/** The anchors a markdown file offers: its headings' slugs (duplicates numbered) and HTML ids. */
function anchorsOf (file) {
  const seen = new Map()
  const anchors = new Set()
  for (const line of withoutFences(fs.readFileSync(file, 'utf8'))) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    if (heading) {
      const base = slug(heading[1])
      const n = seen.get(base) || 0
      seen.set(base, n + 1)
      anchors.add(n === 0 ? base : `${base}-${n}`)
    }
    for (const [, id] of line.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(id)
  }
  return anchors
}

/** Every link target of `file`: `{ line, target }`. */
function linksOf (file) {
  const links = []
  withoutFences(fs.readFileSync(file, 'utf8')).forEach((raw, i) => {
    const line = raw.replace(/(`+)(?:(?!\1)[\s\S])*?\1/g, 'code') // inline code is not a link
    for (const [, target] of line.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ line: i + 1, target })
    const definition = /^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(line)
    if (definition) links.push({ line: i + 1, target: definition[1] })
  })
  return links
}

/** Why `target`, linked from `file`, does not resolve; null when it does. */
function brokenBecause (file, target) {
  if (/^(https?:|mailto:)/i.test(target)) return null
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return 'a scheme other than http(s): or mailto:'
  const [pathPart, anchor] = target.split('#', 2)
  const resolved = pathPart === '' ? file : path.resolve(path.dirname(file), decodeURI(pathPart.split('?')[0]))
  if (path.relative(ROOT, resolved).startsWith('..')) return 'it leaves the repository'
  if (!fs.existsSync(resolved)) return `no such file: ${path.relative(ROOT, resolved)}`
  if (anchor !== undefined && resolved.endsWith('.md') && fs.statSync(resolved).isFile()) {
    if (!anchorsOf(resolved).has(decodeURIComponent(anchor))) return `no heading #${anchor} in ${path.relative(ROOT, resolved)}`
  }
  return null
}

test('the pages checked include README, docs/ and packages/hbase-client/README.md', () => {
  for (const file of FILES) expect(fs.existsSync(file)).toBe(true)
  expect(FILES.some((f) => path.relative(ROOT, f).startsWith('docs' + path.sep))).toBe(true)
})

test.each(FILES.map((f) => [path.relative(ROOT, f), f]))('every relative link of %s resolves', (name, file) => {
  const broken = linksOf(file)
    .map(({ line, target }) => ({ line, target, why: brokenBecause(file, target) }))
    .filter((l) => l.why)
    .map((l) => `${name}:${l.line} (${l.target}): ${l.why}`)
  expect(broken).toEqual([])
})

test('the slugs are GitHub\'s', () => {
  expect(slug('Rollups: exact per-minute counts (`logging/rollup/`)')).toBe('rollups-exact-per-minute-counts-loggingrollup')
  expect(slug("A lost host's disk")).toBe('a-lost-hosts-disk')
  expect(slug('`beacon journal status | replay`')).toBe('beacon-journal-status--replay')
  expect(slug('2026-11-25: config reads: 2 in flight, no linger')).toBe('2026-11-25-config-reads-2-in-flight-no-linger')
  expect(slug('Data layout (`lib/toggles/store.js`, `logging/access-log-layout.js`)'))
    .toBe('data-layout-libtogglesstorejs-loggingaccess-log-layoutjs')
})
