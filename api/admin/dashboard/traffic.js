'use strict'
/* global document, window, fetch, AbortSignal, uPlot, BeaconAxes, BeaconToken */

// The dashboard's fleet-wide traffic: polls GET /dashboard/traffic (api/admin/traffic.js: every
// host's requests, read from the access-log rollups) and draws requests per minute per
// endpoint over the last hour, people against bots over the same hour (both on a log-like
// scale: an hour holds spikes and quiet minutes), and the top ids of the last 15 minutes.
// Every value reaches the page through textContent or uPlot's canvas, never as HTML.
;(function () {
  const POLL_MS = 10000
  const TIMEOUT_MS = 8000
  const PALETTE = ['#2563eb', '#dc2626', '#16a34a', '#d97706', '#7c3aed', '#0891b2', '#db2777', '#4b5563']
  const $ = (id) => document.getElementById(id)
  let plot = null
  let plotted = ''
  let whoPlot = null

  /** Minute-by-minute series, one per endpoint; a minute with no row is 0 (nothing counted). */
  function series (body) {
    const names = [...new Set(body.minutes.flatMap((m) => Object.keys(m.endpoints)))].sort()
    const byMinute = new Map(body.minutes.map((m) => [m.t, m.endpoints]))
    const times = []
    for (let t = body.from; t < body.to; t += 60000) times.push(t / 1000)
    const values = names.map((name) => times.map((s) => {
      const counts = byMinute.get(s * 1000)
      return counts && counts[name] ? counts[name] : 0
    }))
    return { names, data: [times, ...values] }
  }

  function draw (body) {
    const container = $('chart-traffic')
    const { names, data } = series(body)
    const size = { width: Math.max(container.clientWidth, 240), height: 180 }
    if (plot && plotted === names.join('\n')) {
      plot.setData(data)
      BeaconAxes.showLatest(plot)
      return
    }
    if (plot) plot.destroy()
    plotted = names.join('\n')
    plot = new uPlot({ // eslint-disable-line new-cap -- the library's own name
      ...size,
      scales: { x: { time: true }, y: BeaconAxes.logCountScale() },
      series: [BeaconAxes.timeSeries()].concat(names.map((name, i) => ({
        label: name,
        stroke: PALETTE[i % PALETTE.length],
        width: 1.5,
        value: BeaconAxes.legendValue(String)
      }))),
      axes: BeaconAxes.timeSeriesAxes(container, { counts: true, byMinute: true, log: true })
    }, data, container)
  }

  /** People and bots per minute, every endpoint together. */
  function drawWho (body) {
    const container = $('chart-who')
    const byMinute = new Map(body.minutes.map((m) => [m.t, m]))
    const sum = (counts) => Object.values(counts || {}).reduce((a, b) => a + b, 0)
    const times = []
    const people = []
    const bots = []
    for (let t = body.from; t < body.to; t += 60000) {
      const m = byMinute.get(t)
      times.push(t / 1000)
      bots.push(m ? sum(m.bots) : 0)
      people.push(m ? sum(m.endpoints) - sum(m.bots) : 0)
    }
    const data = [times, people, bots]
    if (whoPlot) {
      whoPlot.setData(data)
      return BeaconAxes.showLatest(whoPlot)
    }
    whoPlot = new uPlot({ // eslint-disable-line new-cap -- the library's own name
      width: Math.max(container.clientWidth, 240),
      height: 180,
      scales: { x: { time: true }, y: BeaconAxes.logCountScale() },
      series: [
        BeaconAxes.timeSeries(),
        { label: 'people', stroke: PALETTE[2], width: 1.5, value: BeaconAxes.legendValue(String) },
        { label: 'bots', stroke: PALETTE[1], width: 1.5, value: BeaconAxes.legendValue(String) }
      ],
      axes: BeaconAxes.timeSeriesAxes(container, { counts: true, byMinute: true, log: true })
    }, data, container)
  }

  function renderTop (top) {
    const table = $('top-ids')
    const tbody = table.tBodies[0]
    while (tbody.rows.length) tbody.deleteRow(0)
    for (const row of top) {
      const tr = tbody.insertRow()
      tr.dataset.id = row.id
      const th = document.createElement('th')
      th.textContent = row.id
      tr.appendChild(th)
      tr.insertCell().textContent = String(row.count)
      tr.insertCell().textContent = String(row.bots)
      tr.insertCell().textContent = Object.entries(row.endpoints).sort().map(([e, n]) => `${e} ${n}`).join(', ')
    }
    table.nextElementSibling.hidden = tbody.rows.length > 0
  }

  /** It lists visitor ids, so it always needs the token: ask for it, and say why. */
  function askForToken (status) {
    BeaconToken.refused()
    status.textContent = 'traffic: it lists visitor ids, so it needs the admin token (above)'
    status.className = 'problem'
  }

  async function refresh () {
    const status = $('traffic-status')
    if (!BeaconToken.has()) return askForToken(status) // before reading anything
    try {
      const res = await fetch('/dashboard/traffic', {
        signal: AbortSignal.timeout(TIMEOUT_MS),
        cache: 'no-store',
        headers: BeaconToken.headers()
      })
      if (res.status === 401) return askForToken(status)
      const body = await res.json()
      if (!res.ok) throw new Error(body && body.error ? body.error.message : `HTTP ${res.status}`)
      if (!body.enabled) {
        status.textContent = body.reason
        status.className = 'dim'
        // Not "no request": nothing is counted here at all.
        $('top-ids').nextElementSibling.textContent = 'Not counted: this host keeps no access-log rollups.'
        return
      }
      draw(body)
      drawWho(body)
      renderTop(body.top)
      const sumOf = (key) => body.minutes.reduce(
        (n, m) => n + Object.values(m[key] || {}).reduce((a, b) => a + b, 0),
        0
      )
      const total = sumOf('endpoints')
      const bots = sumOf('bots')
      status.dataset.total = String(total)
      status.dataset.bots = String(bots)
      status.textContent = `${total} requests counted in the last hour on every host ` +
        `(${total - bots} from people, ${bots} from bots)` +
        (body.pending.length ? `; ${body.pending.length} minute(s) still being counted` : '') +
        ` · updated ${new Date(body.now).toLocaleTimeString()}`
      status.className = 'dim'
    } catch (err) {
      status.textContent = `traffic: ${err.message}`
      status.className = 'problem'
    }
  }

  async function poll () {
    await refresh()
    window.setTimeout(poll, POLL_MS)
  }

  BeaconToken.onChange(refresh)
  window.addEventListener('resize', () => {
    if (plot) plot.setSize({ width: Math.max($('chart-traffic').clientWidth, 240), height: 180 })
    if (whoPlot) whoPlot.setSize({ width: Math.max($('chart-who').clientWidth, 240), height: 180 })
  })
  poll()
})()
