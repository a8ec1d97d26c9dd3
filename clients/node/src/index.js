// cordon-client: the cordon serve API (docs/api.md) from Node, with no
// dependency but Node's own modules. Node's fetch cannot reach a Unix
// socket, so every request is node:http's, with socketPath or host:port.
//
//   const c = new Client({ socketPath: '/run/cordon.sock' });
//   await c.withSession({}, async (s) => {
//     const r = await s.exec(['sh', '-c', 'echo hi']);   // r.stdout: Buffer
//   });
import http from 'node:http';

/** A refusal of the server (status: its HTTP status) or no report. */
export class CordonError extends Error {
  constructor(message, status = null) {
    super(message);
    this.name = 'CordonError';
    this.status = status;
  }
}

/** The server could not be reached, or its connection broke. */
export class ServerUnreachable extends CordonError {
  constructor(message) {
    super(message);
    this.name = 'ServerUnreachable';
  }
}

const dur = (t) => (t == null ? undefined : typeof t === 'number' ? `${t}s` : String(t));

function refusal(status, body) {
  let msg = body.toString('utf8').trim();
  try {
    const j = JSON.parse(msg);
    if (j && typeof j.error === 'string') msg = j.error;
  } catch { /* not JSON: the text as it is */ }
  return new CordonError(`HTTP ${status}: ${msg}`, status);
}

function event(line) {
  const s = line.toString('utf8').trim();
  if (!s) return null;
  const raw = JSON.parse(s);
  const data = typeof raw.data_b64 === 'string' ? Buffer.from(raw.data_b64, 'base64') : Buffer.alloc(0);
  return { type: raw.type ?? '', data, raw };
}

/** NDJSON events from a stream of Buffers of any size. */
export async function* ndjson(chunks) {
  let pending = Buffer.alloc(0);
  for await (const chunk of chunks) {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    let start = 0;
    for (let nl; (nl = pending.indexOf(10, start)) >= 0; start = nl + 1) {
      const ev = event(pending.subarray(start, nl));
      if (ev) yield ev;
    }
    pending = pending.subarray(start);
  }
  const ev = event(pending);
  if (ev) yield ev;
}

function execBody(argv, o = {}, pty = false) {
  const body = { argv: argv.map(String), pty };
  if (o.env != null) body.env = { ...o.env };
  if (o.cwd != null) body.cwd = o.cwd;
  if (typeof o.stdin === 'string') body.stdin = o.stdin;
  else if (o.stdin != null) body.stdin_b64 = Buffer.from(o.stdin).toString('base64');
  if (o.timeout != null) body.timeout = dur(o.timeout);
  if (o.background) body.background = true;
  return body;
}

function execResult(j, execId = null, stdout = Buffer.alloc(0), stderr = Buffer.alloc(0)) {
  return {
    execId: j.exec ?? execId,
    status: j.status ?? null,
    exitCode: j.exit_code ?? null,
    signal: j.signal ?? null,
    denials: j.denials ?? [],
    usage: j.usage ?? {},
    stdout,
    stderr,
    raw: j,
    get ok() { return this.status === 'ok'; },
    get text() { return this.stdout.toString('utf8'); },
  };
}

/** An exec's events gathered: its output and its result. */
async function collect(events, what) {
  const out = [], err = [];
  let execId = null, result = null;
  for await (const ev of events) {
    if (ev.type === 'started') execId = ev.raw.exec ?? null;
    else if (ev.type === 'stdout') out.push(ev.data);
    else if (ev.type === 'stderr') err.push(ev.data);
    else if (ev.type === 'result') result = ev.raw;
  }
  if (!result) throw new CordonError(`${what}: the exec's stream ended without a result`);
  if (result.dropped_bytes) {
    throw new CordonError(`exec ${result.exec ?? execId}: ${result.dropped_bytes} bytes of its output did not ` +
      `reach this client (its result: ${result.status})`);
  }
  return execResult(result, execId, Buffer.concat(out), Buffer.concat(err));
}

const query = (path) => `?path=${encodeURIComponent(path)}`;

/** A session's files, through the boundary's rules. */
export class Files {
  constructor(session) { this._s = session; }

  async read(path) {
    return this._s._client._call('GET', `${this._s._path}/files${query(path)}`);
  }

  async write(path, data, { parents = true } = {}) {
    const q = query(path) + (parents ? '' : '&parents=0');
    await this._s._client._call('PUT', `${this._s._path}/files${q}`, Buffer.from(data),
      { 'Content-Type': 'application/octet-stream' });
  }

  async delete(path) {
    await this._s._client._call('DELETE', `${this._s._path}/files${query(path)}`);
  }

  async list(path = '.') {
    const j = await this._s._client._json('GET', `${this._s._path}/files/list${query(path)}`);
    return (j.entries ?? []).map((e) => ({
      name: e.name, type: e.type, size: e.size ?? null, mode: e.mode ?? null,
      raw: e.name_b64 != null ? Buffer.from(e.name_b64, 'base64') : Buffer.from(e.name ?? ''),
    }));
  }
}

/** A pty exec's connection after the upgrade: socket carries the
 * terminal's bytes both ways (a net.Socket: write, end, async iteration). */
export class PtyConnection {
  constructor(session, socket, execId) {
    this._session = session;
    this.socket = socket;
    this.execId = execId;
  }

  write(data) {
    return new Promise((resolve, reject) => this.socket.write(data, (e) => (e ? reject(e) : resolve())));
  }

  /** No more input (the pty's end of file). */
  end() { this.socket.end(); }

  /** Its output until the terminal closes (async iteration of Buffers). */
  [Symbol.asyncIterator]() { return this.socket[Symbol.asyncIterator](); }

  async resize(rows, cols) {
    if (!this.execId) throw new CordonError('the server named no exec id for this pty (no resize)');
    await this._session._client._json('POST', `${this._session._path}/exec/${this.execId}/resize`, { rows, cols });
  }

  async result() {
    if (!this.execId) throw new CordonError('the server named no exec id for this pty');
    return this._session.execInfo(this.execId);
  }

  close() { this.socket.destroy(); }
}

/** A background exec (session.exec(argv, {background: true})). */
export class ExecHandle {
  constructor(session, id) {
    this._session = session;
    this.id = id;
  }

  info() { return this._session.execInfo(this.id); }

  async running() { return (await this.info()).state === 'running'; }

  async result() {
    const j = await this.info();
    return j.type === 'result' ? execResult(j, this.id) : null;
  }

  stream({ follow = true } = {}) {
    return this._session._client._stream('GET', `${this._session._path}/exec/${this.id}/output${follow ? '' : '?follow=0'}`);
  }

  async output() {
    const out = [], err = [];
    for await (const ev of this.stream({ follow: false })) {
      if (ev.type === 'stdout') out.push(ev.data);
      else if (ev.type === 'stderr') err.push(ev.data);
    }
    return { stdout: Buffer.concat(out), stderr: Buffer.concat(err) };
  }

  async wait() { return collect(this.stream({ follow: true }), `exec ${this.id}`); }

  signal(sig = 'TERM') { return this._session.signal(this.id, sig); }

  kill() { return this._session.signal(this.id, 'KILL'); }
}

/** One long-lived boundary of a server; close() ends it (its report). */
export class Session {
  constructor(client, j) {
    this._client = client;
    this.id = j.id;
    this.warm = j.warm === true;
    this.workspace = j.workspace ?? null;
    this.cwd = j.cwd ?? null;
    this._path = `/v1/sessions/${encodeURIComponent(j.id)}`;
    this.files = new Files(this);
    this.report = null;
    this._closed = false;
  }

  info() { return this._client._json('GET', this._path); }

  /** The session's change set as it is now (overlay or review mode), with a diff. */
  changes(snapshot) {
    if (snapshot !== undefined && snapshot !== null)
      return this._client._json('GET', `${this._path}/snapshots/${encodeURIComponent(snapshot)}/changes`);
    return this._client._json('GET', `${this._path}/changes`);
  }

  pause() { return this._client._json('POST', `${this._path}/pause`); }

  resume() { return this._client._json('POST', `${this._path}/resume`); }

  /** A snapshot of the workspace (its changes), the session frozen for the copy. */
  snapshot() { return this._client._json('POST', `${this._path}/snapshots`); }

  snapshots() { return this._client._json('GET', `${this._path}/snapshots`); }

  deleteSnapshot(snapshot) {
    return this._client._json('DELETE', `${this._path}/snapshots/${encodeURIComponent(snapshot)}`);
  }

  /** The snapshot's changes kept as a sealed change set for `cordon apply DIR`. */
  snapshotChangeset(snapshot) {
    return this._client._json('POST', `${this._path}/snapshots/${encodeURIComponent(snapshot)}/changeset`);
  }

  /** The workspace back to a snapshot; running execs ended first (status "restored"). */
  restore(snapshot) { return this._client._json('POST', `${this._path}/restore`, { snapshot }); }

  /** A new session of the same request whose workspace starts at snapshot (or now). */
  async fork(snapshot = null) {
    const j = await this._client._json('POST', `${this._path}/fork`, snapshot ? { snapshot } : {});
    if (typeof j.id !== 'string') throw new CordonError(`the server returned no session id: ${JSON.stringify(j)}`);
    return new Session(this._client, j);
  }

  /** The exec's events as they arrive: for await (const ev of ...). */
  execStream(argv, opts = {}) {
    return this._client._stream('POST', `${this._path}/exec`, execBody(argv, opts));
  }

  /** Run argv and wait for its result (output collected); with
   * {background: true}, an ExecHandle at once. */
  async exec(argv, opts = {}) {
    if (opts.background) {
      const j = await this._client._json('POST', `${this._path}/exec`, execBody(argv, opts));
      if (typeof j.exec !== 'string' || !j.exec) throw new CordonError(`the server started no background exec: ${JSON.stringify(j)}`);
      return new ExecHandle(this, j.exec);
    }
    return collect(this.execStream(argv, opts), 'exec');
  }

  async signal(execId, sig = 'TERM') {
    await this._client._json('POST', `${this._path}/exec/${execId}/signal`, { signal: sig });
  }

  execInfo(execId) { return this._client._json('GET', `${this._path}/exec/${execId}`); }

  /** Run argv on a pty of its own: the connection is upgraded (HTTP 101). */
  pty(argv, opts = {}) {
    const body = execBody(argv, opts, true);
    if (opts.rows && opts.cols) Object.assign(body, { rows: opts.rows, cols: opts.cols });
    return this._client._upgrade(`${this._path}/exec`, Buffer.from(JSON.stringify(body)))
      .then(({ socket, headers }) => new PtyConnection(this, socket, headers['cordon-exec'] ?? headers['x-cordon-exec'] ?? null));
  }

  /** End the session (DELETE): its report, every exec in it. Idempotent. */
  async close() {
    if (!this._closed) {
      this._closed = true;
      this.report = await this._client._json('DELETE', this._path);
    }
    return this.report;
  }
}

/** Retry of a request refused for now (429, 503): pauses doubling from
 * initial to maximum seconds with jitter, never under Retry-After, none
 * starting after deadline seconds. */
export const defaultRetry = Object.freeze({ deadline: 60, initial: 0.2, maximum: 5 });

function pause(retry, attempt, retryAfter) {
  const cap = Math.min(retry.maximum, retry.initial * 2 ** attempt);
  const p = cap / 2 + Math.random() * (cap / 2);
  const ra = Number(retryAfter);
  return retryAfter && Number.isFinite(ra) ? Math.max(p, ra) : p;
}

/** A cordon serve: { socketPath } or { url: 'http://127.0.0.1:PORT', token }. */
export class Client {
  constructor({ socketPath = null, url = null, token = null, timeout = null, retry = defaultRetry } = {}) {
    if ((socketPath == null) === (url == null)) throw new TypeError('give a socketPath or a url, not both');
    this.socketPath = socketPath;
    this.url = url;
    this.token = token;
    this.timeout = timeout; // seconds without any byte from the server
    this.retry = retry;
    if (url != null) {
      const u = new URL(url);
      if (u.protocol !== 'http:' || !u.hostname || !u.port) throw new TypeError(`url: http://HOST:PORT expected, not ${url}`);
      this._host = { host: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port) };
    }
  }

  _where() { return this.url ? `cordon serve at ${this.url}` : `cordon serve at socket ${this.socketPath}`; }

  _unreachable(e) { return new ServerUnreachable(`${this._where()}: ${e.code ?? e.name}: ${e.message}`); }

  _options(method, path, headers) {
    const auth = this.token ? { Authorization: `Bearer ${this.token}` } : {};
    const where = this._host ?? { socketPath: this.socketPath };
    return { ...where, method, path, headers: { Host: 'localhost', ...headers, ...auth }, agent: false };
  }

  /** One request: its response (a Readable) with status under 400. */
  _once(method, path, body, headers) {
    return new Promise((resolve, reject) => {
      const h = { ...headers };
      if (body != null) h['Content-Length'] = body.length;
      const req = http.request(this._options(method, path, h));
      if (this.timeout != null) req.setTimeout(this.timeout * 1000, () => req.destroy(new Error(`no answer in ${this.timeout}s`)));
      req.on('error', (e) => reject(e instanceof CordonError ? e : this._unreachable(e)));
      req.on('response', (res) => resolve(res));
      req.end(body ?? undefined);
    });
  }

  async _respond(method, path, body = null, headers = {}) {
    const start = Date.now();
    for (let attempt = 0; ; attempt++) {
      const res = await this._once(method, path, body, headers);
      if (res.statusCode < 400) return res;
      const data = await readAll(res, this);
      if ((res.statusCode === 429 || res.statusCode === 503) && this.retry) {
        const p = pause(this.retry, attempt, res.headers['retry-after']);
        if ((Date.now() - start) / 1000 + p <= this.retry.deadline) {
          await new Promise((r) => setTimeout(r, p * 1000));
          continue;
        }
      }
      throw refusal(res.statusCode, data);
    }
  }

  async _call(method, path, body = null, headers = {}) {
    return readAll(await this._respond(method, path, body, headers), this);
  }

  async _json(method, path, obj = null) {
    const body = obj == null ? null : Buffer.from(JSON.stringify(obj));
    const data = await this._call(method, path, body, body ? { 'Content-Type': 'application/json' } : {});
    const s = data.toString('utf8').trim();
    return s ? JSON.parse(s) : {};
  }

  /** An NDJSON stream's events, until its result. */
  async* _stream(method, path, obj = null) {
    const body = obj == null ? null : Buffer.from(JSON.stringify(obj));
    const res = await this._respond(method, path, body, body ? { 'Content-Type': 'application/json' } : {});
    try {
      for await (const ev of ndjson(res)) {
        yield ev;
        if (ev.type === 'result') return;
      }
    } catch (e) {
      throw e instanceof CordonError || e instanceof SyntaxError ? e : this._unreachable(e);
    } finally {
      res.destroy();
    }
  }

  /** A request upgraded (HTTP 101): { socket, headers }, what the server
   * sent with the 101 put back in front of the socket's bytes. */
  _upgrade(path, body) {
    return new Promise((resolve, reject) => {
      const req = http.request(this._options('POST', path, {
        Connection: 'Upgrade', Upgrade: 'tcp', 'Content-Type': 'application/json', 'Content-Length': body.length,
      }));
      req.on('error', (e) => reject(this._unreachable(e)));
      req.on('upgrade', (res, socket, head) => {
        if (head && head.length) socket.unshift(head);
        resolve({ socket, headers: res.headers });
      });
      req.on('response', async (res) => {
        try {
          reject(refusal(res.statusCode, await readAll(res, this)));
        } catch (e) {
          reject(e);
        }
      });
      req.end(body);
    });
  }

  /** A new session (POST /v1/sessions); close() it, or use withSession. */
  async session({ policy, idleTimeout, timeout } = {}) {
    const body = {};
    if (policy != null) body.policy = policy;
    if (idleTimeout != null) body.idle_timeout = dur(idleTimeout);
    if (timeout != null) body.timeout = dur(timeout);
    const j = await this._json('POST', '/v1/sessions', body);
    if (typeof j.id !== 'string') throw new CordonError(`the server returned no session id: ${JSON.stringify(j)}`);
    return new Session(this, j);
  }

  /** fn(session), the session always ended afterwards; fn's value. */
  async withSession(opts, fn) {
    const s = await this.session(opts);
    try {
      return await fn(s);
    } finally {
      await s.close();
    }
  }

  async sessions() { return (await this._json('GET', '/v1/sessions')).sessions ?? []; }

  sessionReport(id) { return this._json('GET', `/v1/sessions/${encodeURIComponent(id)}/report`); }

  pool() { return this._json('GET', '/v1/pool'); }

  /** GET /v1/version: { version: the program's, api: 1 }. */
  version() { return this._json('GET', '/v1/version'); }

  /** Is the server ready (GET /v1/health, no token)? */
  async health() {
    const res = await this._once('GET', '/v1/health', null, {});
    await readAll(res, this);
    return res.statusCode === 200;
  }

  async metrics() { return (await this._call('GET', '/v1/metrics')).toString('utf8'); }

  /** A one-shot run (POST /v1/runs): its report, output in stdoutData and stderrData. */
  async run(argv, { policy, stdin, timeout } = {}) {
    const body = { argv: argv.map(String) };
    if (policy != null) body.policy = policy;
    if (timeout != null) body.policy = { ...body.policy, limits: { ...body.policy?.limits, wall_time: dur(timeout) } };
    if (stdin != null) {
      const b = Buffer.from(stdin);
      const text = new TextDecoder('utf-8', { fatal: true });
      try {
        body.stdin = typeof stdin === 'string' ? stdin : text.decode(b);
      } catch {
        throw new TypeError('stdin: POST /v1/runs takes text (UTF-8) only; use a session\'s exec for binary input');
      }
    }
    return runReport(await this._json('POST', '/v1/runs', body));
  }

  async getRun(id) { return runReport(await this._json('GET', `/v1/runs/${encodeURIComponent(id)}`)); }
}

function runReport(j) {
  const run = j && typeof j.run === 'object' ? j.run : {};
  return { ...j, stdoutData: Buffer.from(run.stdout_b64 ?? '', 'base64'), stderrData: Buffer.from(run.stderr_b64 ?? '', 'base64') };
}

async function readAll(res, client) {
  const parts = [];
  try {
    for await (const c of res) parts.push(c);
  } catch (e) {
    throw client._unreachable(e);
  }
  return Buffer.concat(parts);
}

export default Client;
