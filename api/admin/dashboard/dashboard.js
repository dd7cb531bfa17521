'use strict'
/* global document, window, fetch, performance, AbortSignal, uPlot, BeaconMetrics, BeaconAxes, BeaconToken */

// The live dashboard: polls GET /metrics and GET /readyz of this admin port every second,
// derives rates and quantiles with BeaconMetrics (metrics-math.js) and draws them with uPlot.
// Every value reaches the page through textContent or uPlot's canvas, never as HTML.
;(function () {
  const POLL_MS = 1000
  const TIMEOUT_MS = 5000
  const HISTORY = 120 // points per chart: two minutes at one poll a second
  const PALETTE = ['#2563eb', '#dc2626', '#16a34a', '#d97706', '#7c3aed', '#0891b2', '#db2777', '#4b5563']

  const $ = (id) => document.getElementById(id)

  const millis = (ms) => (ms < 1 ? ms.toFixed(2) : ms < 100 ? ms.toFixed(1) : String(Math.round(ms)))
  const fmt = {
    rate: (v) => (v === null || !Number.isFinite(v) ? '–' : v >= 100 ? String(Math.round(v)) : v.toFixed(1)),
    ms: (s) => (s === null || !Number.isFinite(s) ? '–' : millis(s * 1000)),
    ratio: (v) => (v === null || !Number.isFinite(v) ? '–' : (v * 100).toFixed(1) + '%'),
    count: (v) => (v === null || !Number.isFinite(v) ? '–' : String(Math.round(v))),
    seconds: (v) => (v === null || !Number.isFinite(v) ? '–' : v.toFixed(1))
  }

  /**
   * A uPlot time-series chart whose series are discovered as they appear in /metrics (an
   * endpoint shows up with its first request). uPlot's series list is fixed per instance, so a
   * new name rebuilds the chart; otherwise a point is a cheap setData.
   */
  function seriesChart (containerId, format, { counts = false } = {}) {
    const container = $(containerId)
    const times = []
    const values = new Map() // series name -> array aligned with times
    let plot = null
    let names = []

    function size () {
      return { width: Math.max(container.clientWidth, 240), height: 180 }
    }

    function build () {
      if (plot) plot.destroy()
      names = [...values.keys()]
      plot = new uPlot({ // eslint-disable-line new-cap -- the library's own name
        ...size(),
        scales: { x: { time: true }, y: { range: (u, min, max) => [0, max > 0 ? max * 1.1 : 1] } },
        series: [BeaconAxes.timeSeries()].concat(names.map((name, i) => ({
          label: name,
          stroke: PALETTE[i % PALETTE.length],
          width: 1.5,
          value: BeaconAxes.legendValue(format)
        }))),
        axes: BeaconAxes.timeSeriesAxes(container, { counts })
      }, data(), container)
    }

    function data () {
      return [times].concat([...values.values()])
    }

    return {
      /** @param {number} t unix seconds @param {Map<string, number|null>} point */
      push (t, point) {
        times.push(t)
        for (const name of point.keys()) {
          if (!values.has(name)) values.set(name, times.slice(0, -1).map(() => null))
        }
        for (const [name, list] of values) list.push(point.has(name) ? point.get(name) : null)
        if (times.length > HISTORY) {
          times.shift()
          for (const list of values.values()) list.shift()
        }
        if (!plot || names.length !== values.size) build()
        else plot.setData(data())
        BeaconAxes.showLatest(plot)
      },
      resize () {
        if (plot) plot.setSize(size())
      }
    }
  }

  /**
   * Upserts one row per item, keyed by its name in `data-<key>`; each cell carries
   * `data-field` so tests and people can find a number.
   */
  const tableRows = new Map() // table id -> Map(name -> row)
  function renderTable (tableId, key, items, columns) {
    const table = $(tableId)
    const tbody = table.tBodies[0]
    if (!tableRows.has(tableId)) tableRows.set(tableId, new Map())
    const rows = tableRows.get(tableId)
    for (const item of items) {
      let row = rows.get(item[key])
      if (!row) {
        row = tbody.insertRow()
        rows.set(item[key], row)
        row.dataset[key] = item[key]
        const th = document.createElement('th')
        th.scope = 'row'
        th.textContent = item[key]
        row.appendChild(th)
        for (const column of columns) row.insertCell().dataset.field = column.field
      }
      columns.forEach((column, i) => {
        const cell = row.cells[i + 1]
        cell.textContent = column.format(item[column.field], item)
        cell.className = column.alarm && column.alarm(item[column.field], item) ? 'alarm' : ''
      })
    }
    table.nextElementSibling.hidden = tbody.rows.length > 0
  }

  function setStatus (id, text, cls) {
    const el = $(id)
    el.textContent = text
    el.className = cls || ''
  }

  const charts = {
    rps: seriesChart('chart-rps', fmt.rate),
    p99: seriesChart('chart-p99', millis),
    hbase: seriesChart('chart-hbase', millis),
    backlog: seriesChart('chart-backlog', fmt.count, { counts: true })
  }
  window.addEventListener('resize', () => { for (const chart of Object.values(charts)) chart.resize() })

  let prev = null
  let prevAt = 0
  let ready = null
  let updates = 0

  function render (view) {
    renderTable('endpoints', 'endpoint', view.endpoints, [
      { field: 'rps', format: fmt.rate },
      { field: 'errorRps', format: fmt.rate, alarm: (v) => v > 0 },
      { field: 'p50', format: fmt.ms },
      { field: 'p99', format: fmt.ms },
      { field: 'hitRatio', format: fmt.ratio },
      { field: 'total', format: fmt.count }
    ])
    renderTable('hbase-rpc', 'method', view.hbase, [
      { field: 'rps', format: fmt.rate },
      { field: 'p50', format: fmt.ms },
      { field: 'p99', format: fmt.ms },
      { field: 'errorRps', format: fmt.rate, alarm: (v) => v > 0 },
      { field: 'errors', format: fmt.count }
    ])
    const checks = (ready && ready.checks) || {}
    renderTable('access-log', 'sink', view.accessLog.map((s) => ({
      ...s,
      state: checks['accessLog.' + s.sink] || '–'
    })), [
      { field: 'acceptedRps', format: fmt.rate },
      { field: 'writtenRps', format: fmt.rate },
      { field: 'spilledRps', format: fmt.rate, alarm: (v) => v > 0 },
      { field: 'replayedRps', format: fmt.rate },
      { field: 'queueDepth', format: fmt.count },
      { field: 'pending', format: fmt.count },
      { field: 'journalPending', format: fmt.count, alarm: (v) => v > 0 },
      { field: 'oldestPendingSeconds', format: fmt.seconds, alarm: (v) => v > 5 },
      { field: 'spilledTotal', format: fmt.count },
      { field: 'shedTotal', format: fmt.count, alarm: (v) => v > 0 },
      { field: 'state', format: (v) => v, alarm: (v) => v !== 'ok' }
    ])
    $('error-codes').textContent = view.hbaseErrorsByCode.length
      ? 'errors by code since start: ' + view.hbaseErrorsByCode.map((e) => `${e.code} ${e.total}`).join(', ')
      : ''
    setStatus('cached', fmt.count(view.cachedConfigs))
    const hbaseErrors = view.hbase.reduce((n, m) => n + (m.errorRps || 0), 0)
    setStatus('hbase-errors', fmt.rate(hbaseErrors), hbaseErrors > 0 ? 'bad' : 'ok')

    const t = Date.now() / 1000
    const ms = (s) => (s === null ? null : s * 1000)
    charts.rps.push(t, new Map(view.endpoints.map((e) => [e.endpoint, e.rps])))
    charts.p99.push(t, new Map(view.endpoints.map((e) => [e.endpoint, ms(e.p99)])))
    charts.hbase.push(t, new Map(view.hbase.map((m) => [m.method, ms(m.p99)])))
    charts.backlog.push(
      t,
      new Map(
        view.accessLog.flatMap((s) => [
          [s.sink + ' pending', s.pending],
          [s.sink + ' journal', s.journalPending]
        ])
      )
    )
  }

  function renderReady (body) {
    ready = body
    if (!body) {
      setStatus('hbase', 'unknown (no answer from /readyz)', 'bad')
      setStatus('ready', 'unknown', 'bad')
      return
    }
    const hbase = body.checks && body.checks.hbase
    setStatus('hbase', hbase || 'not used', hbase === 'reachable' || !hbase ? 'ok' : 'bad')
    setStatus('ready', body.status, body.status === 'ready' ? 'ok' : 'bad')
  }

  const get = (path) => fetch(path, { cache: 'no-store', signal: AbortSignal.timeout(TIMEOUT_MS), headers: BeaconToken.headers() })

  /** One poll: fetch both, render what arrived; returns what went wrong, for the header. */
  async function refresh () {
    const problems = []
    const [metrics, readyz] = await Promise.allSettled([
      get('/metrics').then(async (res) => {
        // Off loopback, /metrics needs the token too.
        if (res.status === 401) BeaconToken.refused()
        if (!res.ok) throw new Error(`HTTP ${res.status}`)
        return res.text()
      }),
      // 503 is an answer too: its body says why the process is not ready.
      get('/readyz').then((res) => res.json())
    ])
    const at = performance.now()

    if (readyz.status === 'fulfilled') renderReady(readyz.value)
    else {
      renderReady(null)
      problems.push(`GET /readyz failed: ${readyz.reason.message}`)
    }
    if (metrics.status === 'fulfilled') {
      const cur = BeaconMetrics.parsePrometheusText(metrics.value)
      if (prev) {
        render(BeaconMetrics.derive(prev, cur, (at - prevAt) / 1000))
        document.body.dataset.updates = String(++updates) // lets a test wait for N updates
      }
      prev = cur
      prevAt = at
      $('updated').textContent = new Date().toLocaleTimeString()
    } else {
      problems.push(`GET /metrics failed: ${metrics.reason.message}`)
    }
    return problems
  }

  // A timeout chain rather than setInterval: a slow scrape never piles up requests, and a
  // failed one (server restarting) is shown and retried instead of stopping the page.
  async function poll () {
    const started = performance.now()
    let problems
    try {
      problems = await refresh()
    } catch (err) {
      problems = [`dashboard error: ${err.message}`]
    }
    const problem = $('problem')
    problem.textContent = problems.join(' · ')
    problem.hidden = problems.length === 0
    window.setTimeout(poll, Math.max(0, POLL_MS - (performance.now() - started)))
  }

  poll()
})()
