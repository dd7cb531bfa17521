'use strict'

const net = require('node:net')
const { EventEmitter } = require('node:events')
const { connectionPreamble, encodeCall, decodeResponseHeader, decodeResponseBody } = require('./protocol')
const { HBaseError, remoteError } = require('./errors')
const { ConnectionTally, KindTally } = require('./traffic')

const MAX_CALL_ID = 0x7fffffff
/** Where the calls of a caller that gives no kind tally go (a connection used on its own, in tests). */
const NO_KIND = new KindTally()

/**
 * One TCP connection to one HBase server for one service, multiplexing concurrent calls by
 * call id. It never reconnects: when the socket dies every pending call fails with a
 * retryable HBASE_CONNECTION error and the pool makes a new connection on the next call.
 */
/** The default cap of a response frame (ClientOptions.maxFrameBytes). */
const DEFAULT_MAX_FRAME = 256 * 1024 * 1024

class Connection extends EventEmitter {
  /**
   * @param {{ host: string, port: number, service: string, user: string, connectTimeout: number, cellBlocks?: boolean,
   *   maxFrameBytes?: number, tally?: ConnectionTally }} options
   *   cellBlocks: name KeyValueCodec in the connection header, so cells travel in cell blocks;
   *   tally: where this connection counts its traffic (the pool keeps one per server and service);
   *   maxFrameBytes: the largest response frame it takes (a peer's 4-byte length is not trusted)
   */
  constructor ({ host, port, service, user, connectTimeout, cellBlocks = false, maxFrameBytes = DEFAULT_MAX_FRAME, tally }) {
    super()
    this.host = host
    this.port = port
    this.address = `${host}:${port}`
    this.service = service
    this.cellBlocks = cellBlocks
    this.maxFrameBytes = maxFrameBytes
    this.closed = false
    this._pending = new Map()
    this._nextCallId = 1
    /** @type {Buffer[]} */
    this._chunks = []
    this._buffered = 0
    this._corked = false
    this._tickPending = false // an uncork at the end of this tick is scheduled
    this._checkPending = false // one in the loop's check phase is
    this._sweeper = null
    this._sweepEvery = 0
    this._ending = false
    this._connected = false // until then nothing written reached the server
    this._tally = tally || new ConnectionTally(this.address, service)
    this._tally.connects++
    this._uncorkAtTick = () => {
      this._tickPending = false
      this._uncork()
    }
    this._uncorkAtCheck = () => {
      this._checkPending = false
      this._uncork()
    }

    this.socket = net.connect({ host, port, noDelay: true, keepAlive: true, keepAliveInitialDelay: 10000 })
    this.socket.setTimeout(connectTimeout, () => {
      this._fail(
        new HBaseError('HBASE_CONNECTION', `connect to ${this.address} timed out after ${connectTimeout} ms`, {
          retryable: true,
          relocate: true,
          server: this.address
        })
      )
    })
    this.socket.once('connect', () => {
      this._connected = true
      this.socket.setTimeout(0)
    })
    // Writes before 'connect' are queued by the socket, so calls can be sent immediately.
    this.socket.write(connectionPreamble(service, user, cellBlocks))
    this._tally.socketWrites++
    this.socket.on('data', (chunk) => this._onData(chunk))
    this.socket.on('error', (/** @type {NodeJS.ErrnoException} */ err) => {
      this._fail(
        new HBaseError('HBASE_CONNECTION', `connection to ${this.address} failed: ${err.code || err.message}`, {
          retryable: true,
          relocate: true,
          cause: err,
          server: this.address
        })
      )
    })
    // The server's FIN is read in the poll phase, while 'close' only comes in the close phase,
    // after the sweep's setImmediate: failing on 'end' lets a closed connection decide first.
    const closed = () => {
      this._fail(
        new HBaseError('HBASE_CONNECTION', `connection to ${this.address} closed`, {
          retryable: true,
          relocate: true,
          server: this.address
        })
      )
    }
    this.socket.on('end', closed)
    this.socket.on('close', closed)
  }

  /**
   * Sends one call and resolves with the decoded response.
   * @param {{ name: string, request: import('protobufjs').Type, response: import('protobufjs').Type }} method
   *   from protocol.METHODS
   * @param {object} request
   * @param {number} timeoutMs per-call timeout
   * @param {KindTally} [kind] the tally of the caller's kind: counts the frame and its answer
   * @param {boolean} [coalesce] the frame may wait for the loop's check phase (see _send)
   * @returns {Promise<object>}
   */
  call (method, request, timeoutMs, kind = NO_KIND, coalesce = false) {
    if (this.closed || this._ending) {
      return Promise.reject(
        Object.assign(new HBaseError('HBASE_CONNECTION', `connection to ${this.address} is closed`, {
          retryable: true,
          relocate: true,
          server: this.address
        }), { unsent: true })
      )
    }
    const callId = this._nextCallId
    this._nextCallId = callId >= MAX_CALL_ID ? 1 : callId + 1
    let frame
    try {
      frame = encodeCall(callId, method, request, timeoutMs, this.cellBlocks)
    } catch (caught) {
      const err = /** @type {Error} */ (caught)
      return Promise.reject(
        new HBaseError('HBASE_BAD_ARGUMENT', `cannot encode ${method.name}: ${err.message}`, { cause: err })
      )
    }
    const tally = this._tally
    tally.requestFrames++
    tally.requestBytes += frame.length
    kind.sent(method.name, frame.length)
    return new Promise((resolve, reject) => {
      this._pending.set(callId, { resolve, reject, method, kind, deadline: Date.now() + timeoutMs })
      this._send(frame, coalesce)
      this._armSweeper(timeoutMs)
    })
  }

  /**
   * Hands a frame to the corked socket; the frames corked together leave in one write (writev).
   * A frame leaves when the current tick ends (process.nextTick), as every frame always did,
   * unless `coalesce`: then it may wait for the loop's check phase (setImmediate), so the frames of
   * one loop iteration (timers, I/O callbacks) share a write — or leave earlier, with the next
   * frame that does not wait. Each write wakes the server's RPC threads once.
   * @param {Buffer} frame
   * @param {boolean} coalesce
   */
  _send (frame, coalesce) {
    if (!this._corked) {
      this._corked = true
      this.socket.cork()
    }
    if (!coalesce) {
      if (!this._tickPending) {
        this._tickPending = true
        process.nextTick(this._uncorkAtTick)
      }
    } else if (!this._checkPending && !this._tickPending) {
      this._checkPending = true
      setImmediate(this._uncorkAtCheck)
    }
    this.socket.write(frame)
  }

  _uncork () {
    if (!this._corked) return // sent already, with a frame that did not wait
    this._corked = false
    this._tally.socketWrites++
    this.socket.uncork()
  }

  /**
   * Closes the socket now; pending calls fail with `reason`, by default a retryable
   * HBASE_CONNECTION error. Idempotent.
   * @param {Error} [reason]
   * @returns {void}
   */
  close (reason) {
    if (this.closed) return
    this._fail(
      reason ||
        new HBaseError('HBASE_CONNECTION', `connection to ${this.address} closed by client`, {
          retryable: true,
          server: this.address
        })
    )
  }

  /**
   * Closes gracefully: refuses new calls at once, lets the pending ones be answered or time out,
   * then closes the socket. Idempotent; `close()` meanwhile still closes at once.
   * @returns {Promise<void>}
   */
  end () {
    if (this.closed) return Promise.resolve()
    /** @type {Promise<void>} */
    const closed = new Promise((resolve) => this.once('close', () => resolve()))
    this._ending = true
    this._closeIfDrained()
    return closed
  }

  _closeIfDrained () {
    if (this._ending && this._pending.size === 0) this.close()
  }

  // One timer per connection, not per call: it sweeps expired calls while any are pending, every
  // quarter of the shortest timeout among them (10..250 ms), so no call overruns its own by more.
  /** @param {number} timeoutMs */
  _armSweeper (timeoutMs) {
    const every = Math.max(10, Math.min(250, Math.floor(timeoutMs / 4)))
    if (this._sweeper && this._sweepEvery <= every) return
    this._stopSweeper()
    this._sweepEvery = every
    this._sweeper = setInterval(() => this._sweep(), every)
    this._sweeper.unref()
  }

  _stopSweeper () {
    if (this._sweeper) clearInterval(this._sweeper)
    this._sweeper = null
  }

  _sweep () {
    if (this._pending.size === 0) {
      this._stopSweeper()
      return
    }
    // Decided after this turn's I/O (setImmediate runs after the poll phase): when the event loop
    // was held up past a deadline, an answer or a closed socket that arrived meanwhile is read
    // first and says what really happened, instead of a timeout that did not.
    // Only deadlines passed by the time of this sweep expire: a stall between the sweep and its
    // setImmediate (the event loop held up in this turn's poll phase) must not expire calls
    // whose answer or closed socket the next poll phase reads; the next sweep takes them.
    if (this._expiryQueued) return
    this._expiryQueued = true
    const sweptAt = Date.now()
    setImmediate(() => {
      this._expiryQueued = false
      this._expire(sweptAt)
    })
  }

  /** @param {number} now the time of the sweep: calls whose deadline had passed by then expire */
  _expire (now) {
    if (this.closed) return
    for (const [callId, call] of this._pending) {
      if (call.deadline <= now) {
        this._pending.delete(callId)
        // relocate: a server that stopped answering (a long GC pause, a frozen host) is declared
        // dead by the master after its ZooKeeper session expires and its regions move, while its
        // sockets stay open: only asking meta again finds them.
        call.reject(
          new HBaseError('HBASE_CALL_TIMEOUT', `${call.method.name} to ${this.address} got no answer in time`, {
            retryable: true,
            relocate: true,
            server: this.address
          })
        )
      }
    }
    this._closeIfDrained()
  }

  /** @param {Error} err */
  _fail (err) {
    if (this.closed) return
    this.closed = true
    this._stopSweeper()
    this.socket.destroy()
    const pending = this._pending
    this._pending = new Map()
    // Never connected: no call reached the server (mayHaveApplied() reads this).
    if (!this._connected && pending.size) Object.assign(err, { unsent: true })
    for (const call of pending.values()) call.reject(err)
    this.emit('close', err)
  }

  /** @param {Buffer} chunk */
  _onData (chunk) {
    this._tally.socketReads++
    if (this._buffered === 0 && this._chunks.length === 0) {
      // Fast path: parse straight out of the chunk while it holds whole frames.
      let offset = 0
      while (chunk.length - offset >= 4) {
        const size = chunk.readUInt32BE(offset)
        if (size > this.maxFrameBytes) return this._frameTooLarge(size)
        if (chunk.length - offset - 4 < size) break
        this._onFrame(chunk.subarray(offset + 4, offset + 4 + size))
        offset += 4 + size
      }
      if (offset === chunk.length) return
      chunk = chunk.subarray(offset)
    }
    this._chunks.push(chunk)
    this._buffered += chunk.length
    while (this._buffered >= 4) {
      if (this._chunks.length > 1) this._chunks = [Buffer.concat(this._chunks, this._buffered)]
      const buf = this._chunks[0]
      const size = buf.readUInt32BE(0)
      if (size > this.maxFrameBytes) return this._frameTooLarge(size)
      if (buf.length - 4 < size) return
      this._onFrame(buf.subarray(4, 4 + size))
      const rest = buf.subarray(4 + size)
      this._chunks = rest.length ? [rest] : []
      this._buffered = rest.length
    }
  }

  /**
   * A frame longer than the cap: the connection fails (its calls are retried elsewhere or again),
   * so a broken or hostile peer cannot make this process buffer gigabytes.
   * @param {number} size
   */
  _frameTooLarge (size) {
    this._fail(new HBaseError('HBASE_PROTOCOL',
      `response frame of ${size} bytes from ${this.address} is over the ${this.maxFrameBytes}-byte cap (maxFrameBytes)`,
      { retryable: true, relocate: true, server: this.address }))
  }

  /** @param {Buffer} payload */
  _onFrame (payload) {
    const tally = this._tally
    tally.responseFrames++
    tally.responseBytes += payload.length + 4
    let header, reader
    try {
      ({ header, reader } = decodeResponseHeader(payload))
    } catch (caught) {
      const err = /** @type {Error} */ (caught)
      this._fail(
        new HBaseError('HBASE_PROTOCOL', `undecodable response header from ${this.address}: ${err.message}`, {
          retryable: true,
          cause: err,
          server: this.address
        })
      )
      return
    }
    const call = this._pending.get(header.callId)
    if (!call) return // answered after it timed out
    this._pending.delete(header.callId)
    call.kind.answered(payload.length + 4)
    if (this._ending) process.nextTick(() => this._closeIfDrained())
    if (header.exception) {
      const ex = header.exception
      call.reject(
        remoteError(ex.exceptionClassName, ex.stackTrace, {
          doNotRetry: ex.doNotRetry,
          serverOverloaded: ex.serverOverloaded,
          server: this.address
        })
      )
      return
    }
    try {
      call.resolve(decodeResponseBody(call.method, header, reader, payload))
    } catch (caught) {
      const err = /** @type {Error} */ (caught)
      call.reject(
        new HBaseError(
          'HBASE_PROTOCOL',
          `undecodable ${call.method.name} response from ${this.address}: ${err.message}`,
          { cause: err, server: this.address }
        )
      )
    }
  }
}

module.exports = { Connection }
