'use strict'

const { parseRollout, chooseVariant } = require('../../../lib/toggles/rollout')
const { validateToggles } = require('../../../lib/toggles/validate')

const IDS = Array.from({ length: 100000 }, (_, i) => `visitor-${i + 1}`)
const rollout = (weights, salt = 'checkout-2026') => {
  const parsed = parseRollout({
    salt,
    variants: Object.entries(weights).map(([name, weight]) => ({ name, weight, config: { variant: name } }))
  }, validateToggles)
  if ('error' in parsed) throw new Error(parsed.error)
  return parsed.rollout
}
const variantsOf = (r) => IDS.map((id) => /** @type {any} */ (chooseVariant(r, id)).name)
const count = (names, name) => names.filter((n) => n === name).length

describe('chooseVariant', () => {
  const at10 = variantsOf(rollout({ A: 90, B: 10 }))

  test('90/10 over 100,000 ids without rows: B between 9,700 and 10,300 times', () => {
    expect(count(at10, 'B')).toBeGreaterThanOrEqual(9700)
    expect(count(at10, 'B')).toBeLessThanOrEqual(10300)
    expect(count(at10, 'A') + count(at10, 'B')).toBe(IDS.length)
  })

  test('the same rollout gives every id the same variant again (no state: any worker, host or restart)', () => {
    expect(variantsOf(rollout({ A: 90, B: 10 }))).toEqual(at10)
  })

  test('raising B to 20% only moves ids into B: every earlier B id is still B', () => {
    const at20 = variantsOf(rollout({ A: 80, B: 20 }))
    const movedOutOfB = at10.filter((name, i) => name === 'B' && at20[i] !== 'B').length
    expect(movedOutOfB).toBe(0)
    expect(count(at20, 'B')).toBeGreaterThanOrEqual(19600)
    expect(count(at20, 'B')).toBeLessThanOrEqual(20400)
  })

  test('with three variants, an id moves from X to Y only when Y\'s weight grew against X\'s', () => {
    const steps = [{ A: 80, B: 10, C: 10 }, { A: 70, B: 20, C: 10 }, { A: 60, B: 20, C: 20 }, { A: 60, B: 30, C: 10 }]
    for (let k = 1; k < steps.length; k++) {
      const [was, now] = [steps[k - 1], steps[k]]
      const before = variantsOf(rollout(was))
      const after = variantsOf(rollout(now))
      const moves = new Set(before.map((name, i) => `${name}>${after[i]}`).filter((m) => m[0] !== m[2]))
      for (const move of moves) {
        const [from, to] = move.split('>')
        expect({ move, grew: now[to] / now[from] > was[to] / was[from] }).toEqual({ move, grew: true })
      }
      // The raised variant keeps every id it had.
      const raised = Object.keys(now).find((name) => now[name] > was[name])
      expect([...moves].filter((m) => m.startsWith(raised + '>'))).toEqual([])
    }
  })

  test('another salt is another split', () => {
    const other = variantsOf(rollout({ A: 90, B: 10 }, 'another-test'))
    const bothB = at10.filter((name, i) => name === 'B' && other[i] === 'B').length
    // Independent splits share about 10% of 10% of the ids.
    expect(bothB).toBeGreaterThan(700)
    expect(bothB).toBeLessThan(1300)
  })

  test('a variant of weight 0 gets no one; 100 gets everyone', () => {
    expect(count(variantsOf(rollout({ A: 100, B: 0 })), 'A')).toBe(IDS.length)
  })
})

describe('parseRollout', () => {
  const ok = { salt: 's', variants: [{ name: 'A', weight: 90, config: { x: 1 } }, { name: 'B', weight: 10, config: {} }] }
  const errorOf = (value) => /** @type {any} */ (parseRollout(value, validateToggles)).error

  test('a valid rollout comes back with only its known fields', () => {
    expect(parseRollout({ ...ok, variants: ok.variants.map((v) => ({ ...v, note: 'x' })) }, validateToggles))
      .toEqual({ rollout: ok })
  })

  test.each([
    [null, 'a rollout must be a JSON object'],
    [{ ...ok, extra: 1 }, 'a rollout has only salt and variants (not extra)'],
    [{ ...ok, salt: '' }, 'salt must be a string of 1-128 characters'],
    [{ ...ok, variants: [] }, 'variants must be a list of 1-32 variants'],
    [{ ...ok, variants: [ok.variants[0], { ...ok.variants[1], name: 'A' }] }, 'variants[1].name A is used twice'],
    [{ ...ok, variants: [{ ...ok.variants[0], name: 'a b' }, ok.variants[1]] }, 'variants[0].name must be 1-64 of A-Z a-z 0-9 _ -'],
    [{ ...ok, variants: [{ ...ok.variants[0], weight: '90' }, ok.variants[1]] },
      'variants[0].weight must be a number from 0 to 100 (a percentage)'],
    [{ ...ok, variants: [{ ...ok.variants[0], weight: 80 }, ok.variants[1]] }, 'the variants\' weights add up to 90, not 100'],
    [{ ...ok, variants: [{ ...ok.variants[0], config: [] }, ok.variants[1]] }, 'variants[0].config must be a JSON object']
  ])('%j is refused: %s', (value, message) => {
    expect(errorOf(value)).toBe(message)
  })
})
