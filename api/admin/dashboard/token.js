'use strict'
/* global document, window */

// The admin token, for the parts of the dashboard that need it: the traffic view (it lists
// visitor ids) always, /metrics when the admin port is not on loopback. Asked for once, kept in
// this tab's sessionStorage only (never in the page, a cookie or a URL), sent as a Bearer header.
;(function () {
  const KEY = 'beacon-admin-token'
  const $ = (id) => document.getElementById(id)
  const listeners = []

  /** @returns {Record<string, string>} the Authorization header, when a token was given */
  function headers () {
    const token = window.sessionStorage.getItem(KEY)
    return token ? { Authorization: `Bearer ${token}` } : {}
  }

  /** A 401: the token given (if any) was wrong or none was; ask for it. */
  function refused () {
    const had = window.sessionStorage.getItem(KEY) !== null
    window.sessionStorage.removeItem(KEY)
    $('token-note').textContent = had ? 'That token was refused.' : ''
    $('token-box').hidden = false
  }

  function save () {
    const token = $('token-input').value.trim()
    if (!token) return
    window.sessionStorage.setItem(KEY, token)
    $('token-input').value = ''
    $('token-box').hidden = true
    for (const listener of listeners) listener()
  }

  window.addEventListener('DOMContentLoaded', () => {
    $('token-save').addEventListener('click', save)
    $('token-input').addEventListener('keydown', (e) => { if (e.key === 'Enter') save() })
  })
  const has = () => window.sessionStorage.getItem(KEY) !== null
  window.BeaconToken = { headers, has, refused, onChange: (listener) => listeners.push(listener) }
})()
