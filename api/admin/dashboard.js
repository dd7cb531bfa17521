'use strict'

const path = require('node:path')
const express = require('express')

const PAGE_DIR = path.join(__dirname, 'dashboard')

// Static page, so the policy can be strict: only this origin's scripts, styles and fetches, no
// inline code, no framing. uPlot styles its elements through the CSSOM (el.style.x = ...),
// which style-src does not restrict, so it needs no 'unsafe-inline'.
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:", // data: only for the empty favicon that stops a /favicon.ico 404
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'"
].join('; ')

/**
 * The files the page is made of, by their public name. A fixed allow-list, so no request path
 * ever reaches the file system. uPlot is served from node_modules: the page works offline.
 */
function assetFiles () {
  return new Map([
    ['dashboard.js', path.join(PAGE_DIR, 'dashboard.js')],
    ['traffic.js', path.join(PAGE_DIR, 'traffic.js')],
    ['token.js', path.join(PAGE_DIR, 'token.js')],
    ['dashboard.css', path.join(PAGE_DIR, 'dashboard.css')],
    ['metrics-math.js', path.join(PAGE_DIR, 'metrics-math.js')],
    ['axes.js', path.join(PAGE_DIR, 'axes.js')],
    ['uPlot.iife.min.js', require.resolve('uplot/dist/uPlot.iife.min.js')],
    ['uPlot.min.css', require.resolve('uplot/dist/uPlot.min.css')]
  ])
}

/**
 * Live ops dashboard for the admin app: `GET /dashboard` (the page) and
 * `GET /dashboard/assets/<file>`. The page polls `GET /metrics` and `GET /readyz` of the same
 * admin port and derives everything in the browser, so the server adds no state and no
 * endpoint of its own. The page and its assets need no token; what it reads that lists visitor
 * ids (GET /dashboard/traffic) does, and the page asks for it (dashboard/token.js).
 * @returns {import('express').Router}
 */
function createDashboardRouter () {
  const router = express.Router()
  const assets = assetFiles()
  const page = path.join(PAGE_DIR, 'index.html')

  /**
   * @param {import('express').Response} res
   * @param {import('express').NextFunction} next
   * @param {string} file
   */
  function send (res, next, file) {
    res.set({
      'Content-Security-Policy': CSP,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'Cross-Origin-Resource-Policy': 'same-origin',
      // Revalidate every load (ETag): a server upgrade never leaves an old script with a new page.
      'Cache-Control': 'no-cache'
    })
    res.sendFile(file, { cacheControl: false, dotfiles: 'deny' }, (/** @type {Error|undefined} */ err) => {
      if (err && !res.headersSent) next(err)
    })
  }

  router.get('/dashboard', (req, res, next) => send(res, next, page))
  router.get('/dashboard/assets/:file', (req, res, next) => {
    const file = assets.get(req.params.file)
    if (!file) return next() // the admin app's JSON 404
    send(res, next, file)
  })
  return router
}

module.exports = { createDashboardRouter }
