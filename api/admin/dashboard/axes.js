'use strict'

// The dashboard charts' axes, shared by the browser (a plain script: globalThis.BeaconAxes) and
// node (jest tests the labels on fixed inputs). Tick labels are round and distinct: counts step
// by whole numbers, times by whole seconds or minutes, and a label never outgrows its axis
// (the axis is sized to its widest label) and time labels keep apart (ticks are at least a
// label's width apart). Each chart records the labels it drew in `data-ticks-x` /
// `data-ticks-y` of its container, where the time labels sit (`data-ticks-x-at`, CSS px from
// the plot's left) and the y axis' width in `data-axis-y`.
;(function (root) {
  const STEPS = [1, 2, 5]
  const FONT = '12px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif'
  const TICK_PX = 10 // uPlot's default tick length
  const GAP_PX = 5 // uPlot's default gap between tick and label
  const PAD_PX = 4

  /**
   * 1-2-5 steps from `from` to `to`.
   * @param {number} from a power of ten
   * @param {number} to
   * @returns {number[]}
   */
  function steps (from, to) {
    const out = []
    for (let p = from; p <= to; p *= 10) {
      for (const s of STEPS) out.push(Number((s * p).toPrecision(12)))
    }
    return out
  }

  /** y increments of a chart of counts: whole numbers only, so small counts do not repeat. */
  const COUNT_INCRS = steps(1, 1e12)
  /** y increments of a chart of rates or milliseconds: fractions too. */
  const DECIMAL_INCRS = steps(0.001, 1e12)
  /** x increments, in seconds: never below one second. */
  const SECOND_INCRS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400]
  /** x increments of a chart by the minute. */
  const MINUTE_INCRS = SECOND_INCRS.filter((s) => s >= 60)

  const UNITS = [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k'], [1, '']]

  /**
   * Labels of value ticks `incr` apart: in the unit of the largest (950, 1.2k, 12k, 1.2M), with
   * as many decimals as the step needs, so that every label is distinct and none is longer.
   * @param {number[]} splits
   * @param {number} incr
   * @returns {string[]}
   */
  function valueLabels (splits, incr) {
    const largest = splits.reduce((m, v) => Math.max(m, Math.abs(v)), 0)
    const [size, unit] = UNITS.find(([u]) => largest >= u) || UNITS[UNITS.length - 1]
    const step = incr / size
    const decimals = step > 0 && step < 1 ? Math.min(6, Math.ceil(-Math.log10(step) - 1e-9)) : 0
    return splits.map((v) => {
      const text = (v / size).toFixed(decimals)
      return Number(text) === 0 ? '0' : text + unit
    })
  }

  /**
   * Labels of a count axis on the log-like scale of logCountScale(): each split on its own
   * (0, 5, 50, 500, 5k, 50k), null where uPlot leaves a split unlabelled for room and below 0
   * (uPlot's asinh splits always hold one there; a count never goes there).
   * @param {Array<number|null>} splits
   * @returns {Array<string|null>}
   */
  function logCountLabels (splits) {
    return splits.map((v) => {
      if (v === null || v === undefined || v < 0) return null
      if (v === 0) return '0'
      const [size, unit] = UNITS.find(([u]) => Math.abs(v) >= u) || UNITS[UNITS.length - 1]
      return `${Number((v / size).toPrecision(3))}${unit}`
    })
  }

  /**
   * The y scale of a count chart over a long window: asinh, linear near 0 and logarithmic above,
   * so that a spike of an hour ago does not flatten the traffic of now to the zero line.
   * @returns {object} a uPlot scale
   */
  function logCountScale () {
    return { distr: 4, asinh: 1, range: (u, min, max) => [0, max > 0 ? max * 1.5 : 1] }
  }

  const pad2 = (n) => String(n).padStart(2, '0')

  /**
   * Labels of time ticks (unix seconds, local time): HH:MM when they step by whole minutes,
   * else HH:MM:SS.
   * @param {number[]} splits
   * @param {number} incr the step between ticks, in seconds
   * @returns {string[]}
   */
  function timeLabels (splits, incr) {
    return splits.map((s) => {
      const d = new Date(Math.round(s) * 1000)
      const hm = `${pad2(d.getHours())}:${pad2(d.getMinutes())}`
      return incr % 60 === 0 ? hm : `${hm}:${pad2(d.getSeconds())}`
    })
  }

  /**
   * Width of the y axis for these labels: the widest one, the tick and the gap.
   * @param {string[]} labels
   * @param {(text: string) => number} measure text width in px
   * @returns {number}
   */
  function axisWidth (labels, measure) {
    const widest = labels.reduce((w, label) => (label === null ? w : Math.max(w, measure(label))), 0)
    return Math.ceil(widest) + TICK_PX + GAP_PX + PAD_PX
  }

  /**
   * The least distance between two time ticks: the widest label of that kind and a gap, so that
   * labels centred on their ticks never touch, whatever the chart's width and time span.
   * @param {boolean} byMinute labels are HH:MM, else at most HH:MM:SS
   * @param {(text: string) => number} measure text width in px
   * @returns {number}
   */
  function timeTickSpace (byMinute, measure) {
    return Math.ceil(measure(byMinute ? '88:88' : '88:88:88')) + 2 * GAP_PX + PAD_PX
  }

  /** Text width in px in the axes' font (browser only). */
  let context = null
  function measure (text) {
    if (!context) {
      context = root.document.createElement('canvas').getContext('2d')
      context.font = FONT
    }
    return context.measureText(text).width
  }

  /**
   * uPlot's axes option for a time series chart that records what it draws on `container`.
   * @param {HTMLElement} container
   * @param {{ counts?: boolean, byMinute?: boolean, log?: boolean }} [kind] counts: whole-number
   *   ticks; byMinute: ticks at whole minutes; log: counts on logCountScale()
   * @returns {object[]}
   */
  function timeSeriesAxes (container, { counts = false, byMinute = false, log = false } = {}) {
    return [
      {
        font: FONT,
        incrs: byMinute ? MINUTE_INCRS : SECOND_INCRS,
        // uPlot's default is 50 px, narrower than HH:MM:SS: labels ran together at some spans.
        space: () => timeTickSpace(byMinute, measure),
        values: (u, splits, axisIdx, space, incr) => {
          const labels = timeLabels(splits, incr)
          container.dataset.ticksX = JSON.stringify(labels)
          container.dataset.ticksXAt = JSON.stringify(splits.map((s) => Math.round(u.valToPos(s, 'x'))))
          return labels
        }
      },
      {
        font: FONT,
        incrs: counts ? COUNT_INCRS : DECIMAL_INCRS,
        values: (u, splits, axisIdx, space, incr) => {
          const labels = log ? logCountLabels(splits) : valueLabels(splits, incr)
          container.dataset.ticksY = JSON.stringify(labels.filter((label) => label !== null))
          return labels
        },
        size: (u, values) => {
          const width = axisWidth(values || [], measure)
          container.dataset.axisY = String(width)
          return width
        }
      }
    ]
  }

  /**
   * A series' legend value: at the pointer's point while it is over the chart, else the latest
   * point drawn, so a legend reads at a glance without hovering.
   * @param {(v: number) => string} format
   * @returns {(u: any, v: number|null, seriesIdx: number, idx: number|null) => string}
   */
  function legendValue (format) {
    return (u, v, seriesIdx, idx) => {
      if (idx === null || idx === undefined) {
        const column = u.data[seriesIdx] || []
        for (let i = column.length - 1; i >= 0; i--) if (column[i] !== null && column[i] !== undefined) return format(column[i])
        return '–'
      }
      return v === null || v === undefined ? '–' : format(v)
    }
  }

  /**
   * The x series of a time chart: its legend time in 24-hour local time, as the axis labels are.
   * @returns {object}
   */
  function timeSeries () {
    return {
      value: legendValue((s) => {
        const d = new Date(Math.round(s) * 1000)
        return `${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`
      })
    }
  }

  /**
   * After new data: the legend shows the latest points, unless the pointer is on the chart.
   * @param {any} u a uPlot
   */
  function showLatest (u) {
    if (u.cursor.idx === null || u.cursor.idx === undefined) u.setLegend({ idx: null })
  }

  const api = {
    legendValue,
    showLatest,
    timeSeries,
    valueLabels,
    logCountLabels,
    logCountScale,
    timeLabels,
    axisWidth,
    timeTickSpace,
    timeSeriesAxes,
    COUNT_INCRS,
    DECIMAL_INCRS,
    SECOND_INCRS,
    MINUTE_INCRS,
    FONT
  }
  if (typeof module !== 'undefined' && module.exports) module.exports = api
  else root.BeaconAxes = api
})(globalThis)
