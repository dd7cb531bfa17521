'use strict'

// A bench's job process (tools/bench/lib/processes.js jsonJobMain) ends itself when the bench that
// started it is killed, instead of loading the machine and the bench's HBase on its own.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn } = require('node:child_process')

const PROCESSES = path.join(__dirname, '..', 'lib', 'processes.js')

function alive (pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

test('a job whose parent was SIGKILLed stops within a few seconds', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'beacon-job-'))
  const job = path.join(dir, 'job.js')
  const parent = path.join(dir, 'parent.js')
  const running = path.join(dir, 'running')
  // The job says it runs (so its parent was still there when it started), then sleeps.
  fs.writeFileSync(job, `require(${JSON.stringify(PROCESSES)}).jsonJobMain(module, 'sleeper', () => {\n` +
    `  require('node:fs').writeFileSync(${JSON.stringify(running)}, '')\n` +
    '  return new Promise((resolve) => setTimeout(resolve, 60000))\n})\n')
  fs.writeFileSync(parent, `const c = require('node:child_process').spawn(process.execPath, [${JSON.stringify(job)}, '{}'], ` +
    "{ stdio: 'ignore' })\nconsole.log(c.pid)\nsetInterval(() => {}, 1000)\n")
  const bench = spawn(process.execPath, [parent], { stdio: ['ignore', 'pipe', 'inherit'] })
  let childPid = 0
  try {
    childPid = await new Promise((resolve) => bench.stdout.once('data', (d) => resolve(Number(String(d).trim()))))
    while (!fs.existsSync(running)) await new Promise((resolve) => setTimeout(resolve, 50))
    expect(alive(childPid)).toBe(true)
    bench.kill('SIGKILL')
    const deadline = Date.now() + 10000
    while (alive(childPid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100))
    expect(alive(childPid)).toBe(false)
  } finally {
    bench.kill('SIGKILL')
    if (childPid && alive(childPid)) process.kill(childPid, 'SIGKILL')
    fs.rmSync(dir, { recursive: true, force: true })
  }
})
