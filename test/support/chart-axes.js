'use strict'

/**
 * What a dashboard chart drew on its axes (api/admin/dashboard/axes.js records it on the container),
 * with each y label's width measured in the page, in the axes' own font.
 * @param {import('playwright-core').Page} page
 * @param {string} containerId
 * @returns {Promise<{ x: string[], y: string[], yWidths: number[], axisY: number }>}
 */
function chartAxes (page, containerId) {
  return page.evaluate((id) => {
    const el = document.getElementById(id)
    const context = document.createElement('canvas').getContext('2d')
    context.font = window.BeaconAxes.FONT
    const y = JSON.parse(el.dataset.ticksY || '[]')
    return {
      x: JSON.parse(el.dataset.ticksX || '[]'),
      y,
      yWidths: y.map((label) => context.measureText(label).width),
      axisY: Number(el.dataset.axisY)
    }
  }, containerId)
}

/**
 * Labels that read at a glance: some on each axis, distinct, whole seconds at least, and every
 * y label inside its axis (tick 10 px and gap 5 px included).
 * @param {string} name
 * @param {{ x: string[], y: string[], yWidths: number[], axisY: number }} axes
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
}

module.exports = { chartAxes, expectReadableAxes }
