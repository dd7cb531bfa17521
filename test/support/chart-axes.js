'use strict'

/**
 * @typedef {{ x: string[], xAt: number[], xWidths: number[], y: string[], yWidths: number[], axisY: number }} Axes
 */

/**
 * What a dashboard chart drew on its axes (api/admin/dashboard/axes.js records it on the container),
 * with each label's width measured in the page, in the axes' own font.
 * @param {import('playwright-core').Page} page
 * @param {string} containerId
 * @returns {Promise<Axes>}
 */
function chartAxes (page, containerId) {
  return page.evaluate((id) => {
    const el = document.getElementById(id)
    const context = document.createElement('canvas').getContext('2d')
    context.font = window.BeaconAxes.FONT
    const x = JSON.parse(el.dataset.ticksX || '[]')
    const y = JSON.parse(el.dataset.ticksY || '[]')
    return {
      x,
      xAt: JSON.parse(el.dataset.ticksXAt || '[]'),
      xWidths: x.map((label) => context.measureText(label).width),
      y,
      yWidths: y.map((label) => context.measureText(label).width),
      axisY: Number(el.dataset.axisY)
    }
  }, containerId)
}

/**
 * Neighbouring time labels (centred on their ticks) that touch or overlap: each pair closer than
 * half of each label's width plus a 4 px gap.
 * @param {Pick<Axes, 'x'|'xAt'|'xWidths'>} axes
 * @returns {string[]}
 */
function overlappingTimeLabels ({ x, xAt, xWidths }) {
  const found = []
  for (let i = 1; i < x.length; i++) {
    const apart = xAt[i] - xAt[i - 1]
    if (apart < (xWidths[i] + xWidths[i - 1]) / 2 + 4) found.push(`${x[i - 1]} and ${x[i]}, ${apart} px apart`)
  }
  return found
}

/**
 * Labels that read at a glance: some on each axis, distinct, whole seconds at least, every
 * y label inside its axis (tick 10 px and gap 5 px included), and time labels apart.
 * @param {string} name
 * @param {Axes} axes
 * @param {{ counts?: boolean }} [kind] counts: y labels are whole numbers (or k/M multiples)
 */
function expectReadableAxes (name, axes, { counts = false } = {}) {
  const report = { name, ...axes }
  expect({ name, x: axes.x.length > 0, y: axes.y.length > 1 }).toEqual({ name, x: true, y: true })
  expect({ name, x: new Set(axes.x).size, y: new Set(axes.y).size }).toEqual({ name, x: axes.x.length, y: axes.y.length })
  for (const label of axes.x) expect({ name, label, ok: /^\d\d:\d\d(:\d\d)?$/.test(label) }).toEqual({ name, label, ok: true })
  const countLabel = /^\d+(\.\d+[kMGT])?$|^\d+[kMGT]$/
  if (counts) for (const label of axes.y) expect({ name, label, ok: countLabel.test(label) }).toEqual({ name, label, ok: true })
  const widest = Math.max(...axes.yWidths)
  expect({ report, fits: widest + 15 <= axes.axisY }).toEqual({ report, fits: true })
  expect({ name, xAt: axes.xAt.length }).toEqual({ name, xAt: axes.x.length })
  expect({ report, overlapping: overlappingTimeLabels(axes) }).toEqual({ report, overlapping: [] })
}

module.exports = { chartAxes, expectReadableAxes, overlappingTimeLabels }
