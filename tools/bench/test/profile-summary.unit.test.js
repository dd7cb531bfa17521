'use strict'

const { summarizeProfile, CATEGORIES } = require('../lib/profile-summary')

// A hand-built profile: root → handle (api/public/data-plane.js) → { writev, lookup (lib/toggles/cache.js) → get (lru-cache) },
// root → (garbage collector), root → (idle); one sample every 100 µs from t = 1,000,000 µs.
const frame = (id, functionName, url, children = []) => ({ id, callFrame: { functionName, url, lineNumber: 0 }, children })
const profile = {
  nodes: [
    frame(1, '(root)', '', [2, 6, 7]),
    frame(2, 'handle', 'file:///srv/beacon/api/data-plane.js', [3, 4]),
    frame(3, 'writev', '', []),
    frame(4, 'lookup', 'file:///srv/beacon/lib/toggles/cache.js', [5]),
    frame(5, 'get', 'file:///srv/beacon/node_modules/lru-cache/dist/index.js', []),
    frame(6, '(garbage collector)', '', []),
    frame(7, '(idle)', '', [])
  ],
  startTime: 1000000,
  //        in the window [1,000,150, 1,000,850]: samples at 200..800
  samples: [3, 3, 3, 5, 2, 6, 7, 7, 3, 3],
  timeDeltas: Array(10).fill(100)
}

test('samples in the window are summed by category, first match up the stack; idle and samples outside are left out', () => {
  const s = summarizeProfile(profile, { fromUs: 1000150, toUs: 1000850, requests: 2 })
  // In the window: t=200 writev, 300 writev, 400 get (cache), 500 handle (beacon), 600 gc, 700 idle, 800 idle.
  expect(s.samplesInWindow).toBe(7)
  expect(s.busyUs).toBe(500)
  expect(s.usPerRequest).toBe(250)
  expect(s.categories).toEqual({
    ...Object.fromEntries(Object.keys(CATEGORIES).map((n) => [n, 0])),
    'socket write': 100,
    cache: 50,
    'beacon request': 50,
    gc: 50
  })
  expect(s.topSelf[0]).toEqual(['writev :1', 100])
  expect(s.topSelf.map(([fn]) => fn)).toContain('get lru-cache/dist/index.js:1')
})

test('no requests: per-request figures are 0, not Infinity', () => {
  expect(summarizeProfile(profile, { fromUs: 0, toUs: 2e6, requests: 0 }).usPerRequest).toBe(0)
})
