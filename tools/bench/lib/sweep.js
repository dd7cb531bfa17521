'use strict'

/**
 * The open-loop rate sweep: rising constant arrival rates per endpoint until the server breaks,
 * and the knee. Decisions are pure functions so they are tested on fixed inputs.
 */

/** Default limits: stop above 100 ms p99; the knee is the highest rate still under 10 ms p99. */
const LIMITS = Object.freeze({ stopP99Ms: 100, kneeP99Ms: 10, minAchieved: 0.9 })

/**
 * Why a sweep stops after this step, or null to go on.
 * @param {{ offeredRate: number, rps: number, p99: number|null, errors: number, unsent?: number }} step
 * @param {Partial<typeof LIMITS>} [limits]
 * @returns {string|null}
 */
function stopReason (step, limits = {}) {
  const l = { ...LIMITS, ...limits }
  if (step.errors > 0) return `${step.errors} errors`
  if (step.unsent > 0) return `${step.unsent} requests never sent`
  if (step.p99 === null || step.p99 > l.stopP99Ms) return `p99 ${step.p99} ms > ${l.stopP99Ms} ms`
  // A server that cannot keep up answers less than offered; the backlog shows in p99 only later.
  if (step.rps < step.offeredRate * l.minAchieved) return `achieved ${step.rps} req/s < ${l.minAchieved} × offered`
  return null
}

/**
 * The knee: the highest offered rate whose step had no errors, nothing unsent, the offered rate
 * achieved, and p99 under the limit. Null when even the first step was over.
 * @param {Array<{ offeredRate: number, rps: number, p99: number|null, errors: number, unsent?: number }>} steps
 * @param {Partial<typeof LIMITS>} [limits]
 * @returns {number|null}
 */
function findKnee (steps, limits = {}) {
  const l = { ...LIMITS, ...limits }
  let knee = null
  for (const s of steps) {
    const healthy = s.errors === 0 && !(s.unsent > 0) && s.p99 !== null && s.p99 < l.kneeP99Ms && s.rps >= s.offeredRate * l.minAchieved
    if (healthy && (knee === null || s.offeredRate > knee)) knee = s.offeredRate
  }
  return knee
}

/**
 * Runs steps at the given rates, in order, until one gives a stop reason.
 * @param {number[]} rates ascending req/s
 * @param {(rate: number) => Promise<object>} runStep one open-loop run at that rate
 * @param {Partial<typeof LIMITS>} [limits]
 * @returns {Promise<{ steps: object[], stoppedAt: number|null, stopReason: string|null, knee: number|null }>}
 */
async function runSweep (rates, runStep, limits = {}) {
  const steps = []
  for (const rate of rates) {
    const step = { ...(await runStep(rate)), offeredRate: rate }
    steps.push(step)
    const reason = stopReason(step, limits)
    if (reason) return { steps, stoppedAt: rate, stopReason: reason, knee: findKnee(steps, limits) }
  }
  return { steps, stoppedAt: null, stopReason: null, knee: findKnee(steps, limits) }
}

module.exports = { LIMITS, stopReason, findKnee, runSweep }
