'use strict'

/**
 * Two hand-built SVG charts (grouped bars, lines), enough for the benchmark report without a
 * chart dependency. Output is standalone SVG 1.1: it opens in any browser and renders inline
 * in GitHub markdown. Every bar is a <rect class="bar"> and every point a <circle class="point">
 * with a <title>, so the numbers can be read by hovering and checked by tests.
 */

const WIDTH = 820
const HEIGHT = 420
const MARGIN = { top: 48, right: 170, bottom: 64, left: 72 }
const COLORS = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac']

/** @param {unknown} s @returns {string} text safe inside an element or attribute */
function esc (s) {
  return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
}

function num (n) {
  return Number.isInteger(n) ? String(n) : n.toFixed(2)
}

/** Round tick values 1, 2, 5 × 10^k covering 0..max. */
function linearTicks (max, count = 5) {
  if (!(max > 0)) return [0, 1]
  const raw = max / count
  const mag = 10 ** Math.floor(Math.log10(raw))
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw)
  const ticks = []
  for (let v = 0; v <= max + step * 1e-9; v += step) ticks.push(Number(v.toPrecision(12)))
  if (ticks[ticks.length - 1] < max) ticks.push(Number((ticks[ticks.length - 1] + step).toPrecision(12)))
  return ticks
}

function logTicks (min, max) {
  const ticks = []
  for (let e = Math.floor(Math.log10(min)); e <= Math.ceil(Math.log10(max)); e++) ticks.push(10 ** e)
  return ticks
}

function frame (title, body, legend, colors = legend.map((_, i) => COLORS[i % COLORS.length])) {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" ` +
      'font-family="sans-serif" font-size="12">',
    `<rect x="0" y="0" width="${WIDTH}" height="${HEIGHT}" fill="#ffffff"/>`,
    `<text x="${WIDTH / 2}" y="24" text-anchor="middle" font-size="15" font-weight="bold">${esc(title)}</text>`,
    ...body,
    ...legend.map((name, i) => {
      const y = MARGIN.top + 8 + i * 18
      const x = WIDTH - MARGIN.right + 16
      return `<rect class="legend" x="${x}" y="${y - 9}" width="12" height="12" ` +
        `fill="${colors[i]}"/><text x="${x + 18}" y="${y + 1}">${esc(name)}</text>`
    }),
    '</svg>',
    ''
  ].join('\n')
}

function yAxis (ticks, toY, label) {
  const x0 = MARGIN.left
  const out = [`<line x1="${x0}" y1="${MARGIN.top}" x2="${x0}" y2="${HEIGHT - MARGIN.bottom}" stroke="#333"/>`]
  for (const t of ticks) {
    const y = toY(t)
    out.push(`<line x1="${x0}" y1="${num(y)}" x2="${WIDTH - MARGIN.right}" y2="${num(y)}" stroke="#e5e5e5"/>`)
    out.push(`<text x="${x0 - 6}" y="${num(y + 4)}" text-anchor="end">${esc(t.toLocaleString('en-US'))}</text>`)
  }
  out.push(`<text transform="translate(18 ${(MARGIN.top + HEIGHT - MARGIN.bottom) / 2}) ` +
    `rotate(-90)" text-anchor="middle">${esc(label)}</text>`)
  return out
}

/**
 * Grouped bar chart.
 * @param {{ title: string, yLabel: string, series: string[],
 *   groups: Array<{ label: string, values: Array<number|null> }> }} chart
 *   values[i] belongs to series[i]; null draws no bar
 * @returns {string} SVG document
 */
function barChart ({ title, yLabel, series, groups }) {
  const max = Math.max(0, ...groups.flatMap((g) => g.values.filter((v) => Number.isFinite(v))))
  const ticks = linearTicks(max)
  const top = ticks[ticks.length - 1] || 1
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom
  const plotW = WIDTH - MARGIN.left - MARGIN.right
  const toY = (v) => HEIGHT - MARGIN.bottom - (v / top) * plotH
  const groupW = plotW / Math.max(1, groups.length)
  const barW = (groupW * 0.8) / Math.max(1, series.length)
  const body = yAxis(ticks, toY, yLabel)
  groups.forEach((g, gi) => {
    const gx = MARGIN.left + gi * groupW + groupW * 0.1
    g.values.forEach((v, si) => {
      if (!Number.isFinite(v)) return
      const y = toY(v)
      body.push(
        `<rect class="bar" x="${num(gx + si * barW)}" y="${num(y)}" width="${num(barW * 0.92)}" ` +
          `height="${num(HEIGHT - MARGIN.bottom - y)}" ` +
          `fill="${COLORS[si % COLORS.length]}"><title>${esc(`${g.label} ${series[si]}: ${v.toLocaleString('en-US')}`)}</title></rect>`
      )
    })
    body.push(`<text x="${num(gx + groupW * 0.4)}" y="${HEIGHT - MARGIN.bottom + 18}" text-anchor="middle">${esc(g.label)}</text>`)
  })
  return frame(title, body, series)
}

/**
 * Line chart with points; y may be logarithmic (latency curves span 0.1 ms to seconds).
 * @param {{ title: string, xLabel: string, yLabel: string, logY?: boolean,
 *   series: Array<{ name: string, points: Array<[number, number]>, color?: number, dashed?: boolean }>,
 *   refLines?: Array<{ y: number, label: string, extend?: boolean }> }} chart
 *   color: palette index (default: the series' position), so related series can share a colour;
 *   refLines: horizontal reference lines (e.g. the knee's p99 limit); extend: the y axis reaches
 *   the line even above every point (a cap the curve must stay under)
 * @returns {string} SVG document
 */
function lineChart ({ title, xLabel, yLabel, logY = false, series, refLines = [] }) {
  const pts = series.flatMap((s) => s.points).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y) && (!logY || y > 0))
  const xTicks = linearTicks(Math.max(1, ...pts.map(([x]) => x)))
  const xMax = xTicks[xTicks.length - 1]
  const ys = pts.map(([, y]) => y).concat(refLines.filter((r) => r.extend).map((r) => r.y))
  const yTicks = logY ? logTicks(Math.min(1, ...ys), Math.max(10, ...ys)) : linearTicks(Math.max(1, ...ys))
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom
  const plotW = WIDTH - MARGIN.left - MARGIN.right
  const toX = (x) => MARGIN.left + (x / xMax) * plotW
  const yMin = logY ? Math.log10(yTicks[0]) : 0
  const yMax = logY ? Math.log10(yTicks[yTicks.length - 1]) : yTicks[yTicks.length - 1]
  const toY = (y) => HEIGHT - MARGIN.bottom - (((logY ? Math.log10(y) : y) - yMin) / (yMax - yMin)) * plotH
  const body = yAxis(yTicks, toY, yLabel)
  body.push(`<line x1="${MARGIN.left}" y1="${HEIGHT - MARGIN.bottom}" ` +
    `x2="${WIDTH - MARGIN.right}" y2="${HEIGHT - MARGIN.bottom}" stroke="#333"/>`)
  for (const t of xTicks) {
    body.push(`<text x="${num(toX(t))}" y="${HEIGHT - MARGIN.bottom + 18}" text-anchor="middle">${esc(t.toLocaleString('en-US'))}</text>`)
  }
  body.push(`<text x="${MARGIN.left + plotW / 2}" y="${HEIGHT - 16}" text-anchor="middle">${esc(xLabel)}</text>`)
  for (const r of refLines) {
    if (!(r.y >= (logY ? yTicks[0] : 0) && r.y <= yTicks[yTicks.length - 1])) continue
    const y = num(toY(r.y))
    body.push(`<line class="ref" x1="${MARGIN.left}" y1="${y}" ` +
      `x2="${WIDTH - MARGIN.right}" y2="${y}" stroke="#888" stroke-dasharray="2 3"/>`)
    body.push(`<text x="${WIDTH - MARGIN.right - 4}" y="${num(toY(r.y) - 4)}" text-anchor="end" fill="#666">${esc(r.label)}</text>`)
  }
  const colorOf = (s, si) => COLORS[(s.color ?? si) % COLORS.length]
  series.forEach((s, si) => {
    const color = colorOf(s, si)
    const valid = s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y) && (!logY || y > 0))
    if (valid.length > 1) {
      body.push(
        `<polyline class="line" fill="none" stroke="${color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''} ` +
          `points="${valid.map(([x, y]) => `${num(toX(x))},${num(toY(y))}`).join(' ')}"/>`
      )
    }
    for (const [x, y] of valid) {
      body.push(
        `<circle class="point" cx="${num(toX(x))}" cy="${num(toY(y))}" r="3.5" ` +
          `fill="${color}"><title>${esc(`${s.name}: ${y} at ${x.toLocaleString('en-US')}`)}</title></circle>`
      )
    }
  })
  return frame(title, body, series.map((s) => s.name), series.map(colorOf))
}

module.exports = { barChart, lineChart, linearTicks, esc }
