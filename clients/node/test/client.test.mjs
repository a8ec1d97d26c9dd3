// cordon-client against a real `cordon serve` ($CORDON, else the build
// tree's build/cordon), started per test on a socket in a fresh directory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, CordonError, ServerUnreachable, ExecHandle, ndjson } from '../src/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const top = path.resolve(here, '../../..');
const cordon = process.env.CORDON || path.join(top, 'build', 'cordon');
const noServe = !fs.existsSync(cordon) ? `no cordon binary at ${cordon} (set $CORDON or build first)`
  : spawnSync(cordon, ['serve', '--help']).status !== 0 ? 'this cordon has no serve verb' : false;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// A server of its own for test t: { client, dir, stop }; stopped at t's end.
async function serve(t, args = [], ready = null) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-node-'));
  fs.chmodSync(dir, 0o755);
  const sock = path.join(dir, 's.sock');
  const argv = args.length ? args : ['--socket', sock];
  const p = spawn(cordon, ['serve', ...argv, '--state-dir', path.join(dir, 'state')],
    { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  p.stderr.on('data', (d) => { err += d; });
  const exited = new Promise((r) => p.on('exit', r));
  const up = ready ?? (async () => fs.existsSync(sock));
  for (let i = 0; i < 600 && !(await up()) && p.exitCode === null; i++) await sleep(50); // a hang guard
  if (!(await up())) {
    p.kill('SIGKILL');
    throw new Error(`cordon serve did not start: ${err}`);
  }
  t.after(async () => {
    p.kill('SIGTERM');
    await exited;
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { client: args.length ? null : new Client({ socketPath: sock }), dir };
}

test('session: state across execs, files in and out', { skip: noServe }, async (t) => {
  const { client } = await serve(t);
  const report = await client.withSession({}, async (s) => {
    assert.ok((await s.exec(['/bin/sh', '-c', 'echo 42 > state.txt'])).ok);
    const r = await s.exec(['/bin/cat', 'state.txt']);
    assert.equal(r.text, '42\n');
    await s.files.write('in.txt', 'data');
    assert.ok((await s.exec(['/bin/sh', '-c', 'tr a-z A-Z < in.txt > out.txt'])).ok);
    assert.equal((await s.files.read('out.txt')).toString(), 'DATA');
    const names = (await s.files.list('.')).map((e) => e.name);
    assert.ok(names.includes('in.txt') && names.includes('out.txt'), names.join(' '));
    await s.files.delete('in.txt');
    assert.ok(!(await s.files.list('.')).some((e) => e.name === 'in.txt'));
    const bin = await s.exec(['/bin/cat'], { stdin: Buffer.from([0, 255, 98]) });
    assert.deepEqual([...bin.stdout], [0, 255, 98]);
    await assert.rejects(s.files.read('no-such-file'), (e) => e instanceof CordonError && e.status === 404);
    return s.close();
  });
  assert.equal(report.execs.length, 4);
});

test('session changes: a review session\'s change set with a diff', { skip: noServe }, async (t) => {
  const { client } = await serve(t);
  let s;
  try {
    s = await client.session({ policy: { filesystem: { workspace_mode: 'review' } } });
  } catch (e) {
    if (/idmapped/.test(String(e))) return t.skip(`no review workspace here: ${e}`);
    throw e;
  }
  assert.ok((await s.exec(['/bin/sh', '-c', 'echo hi > a.txt'])).ok);
  const c = await s.changes();
  assert.deepEqual(c.changes.map((x) => [x.change, x.path, x.type]), [['created', 'a.txt', 'file']]);
  assert.ok(c.diff.split('\n').includes('+hi') && !c.diff_truncated, c.diff);
  const report = await s.close();
  assert.equal(report.changes.state, 'kept');
});

test('exec streams its events in order', { skip: noServe }, async (t) => {
  const { client } = await serve(t);
  await client.withSession({}, async (s) => {
    const evs = [];
    for await (const ev of s.execStream(['/bin/sh', '-c', 'echo out; echo err >&2; exit 3'])) evs.push(ev);
    assert.equal(evs[0].type, 'started');
    assert.equal(evs.at(-1).type, 'result');
    assert.equal(Buffer.concat(evs.filter((e) => e.type === 'stdout').map((e) => e.data)).toString(), 'out\n');
    assert.equal(Buffer.concat(evs.filter((e) => e.type === 'stderr').map((e) => e.data)).toString(), 'err\n');
    assert.equal(evs.at(-1).raw.exit_code, 3);
    // Many chunks, every byte once and in order.
    const big = await s.exec(['/bin/sh', '-c', 'seq 1 200000']);
    const want = Array.from({ length: 200000 }, (_, i) => `${i + 1}\n`).join('');
    assert.ok(big.ok && big.text === want, `${big.stdout.length} bytes`);
  });
});

test('signal a background exec', { skip: noServe }, async (t) => {
  const { client } = await serve(t);
  await client.withSession({}, async (s) => {
    const h = await s.exec(['sh', '-c', "echo up; trap 'echo bye; exit 0' TERM; while :; do sleep 0.05; done"], { background: true });
    assert.ok(h instanceof ExecHandle && h.id.startsWith('e-'));
    let out = Buffer.alloc(0);
    for (let i = 0; i < 600 && !out.length; i++) { // a hang guard: until the trap is set
      out = (await h.output()).stdout;
      if (!out.length) await sleep(50);
    }
    assert.equal(out.toString(), 'up\n');
    assert.ok(await h.running());
    await h.signal('TERM');
    const r = await h.wait();
    assert.equal(r.status, 'killed');
    assert.equal(r.text, 'bye\n');
  });
});

test('pty via Upgrade: input, resize, output', { skip: noServe }, async (t) => {
  const { client } = await serve(t);
  await client.withSession({}, async (s) => {
    const p = await s.pty(['/bin/sh', '-c', 'read x; read y; stty size; echo got-$x'], { rows: 24, cols: 80 });
    try {
      assert.match(p.execId, /^e-/);
      await p.write('ping\n');
      let got = '', resized = false;
      for await (const d of p) {
        got += d.toString();
        // the echo of the first line: the pty is there to be resized
        if (got.includes('ping') && !resized) {
          await p.resize(30, 100);
          await p.write('pong\n');
          resized = true;
        }
        if (got.includes('got-ping')) break;
      }
      assert.match(got, /30 100/);
      assert.match(got, /got-ping/);
    } finally {
      p.close();
    }
  });
});

// A resize as soon as the upgrade is answered (before the session's worker
// has the pty's master) is kept and applied when the master comes: it was
// refused with 409 "no pty any more", most of the time (a race: 5 tries).
test('pty resized at once after the upgrade', { skip: noServe }, async (t) => {
  const { client } = await serve(t);
  await client.withSession({}, async (s) => {
    for (let i = 0; i < 5; i++) {
      const p = await s.pty(['/bin/sh', '-c', 'read x; stty size'], { rows: 24, cols: 80 });
      try {
        await p.resize(30, 100);
        await p.write('x\n');
        let got = '';
        for await (const d of p) got += d.toString();
        assert.match(got, /30 100/);
      } finally {
        p.close();
      }
    }
  });
});

test('one-shot run, version, health, unreachable socket', { skip: noServe }, async (t) => {
  const { client, dir } = await serve(t);
  const r = await client.run(['/bin/echo', 'hi']);
  assert.equal(r.status, 'ok');
  assert.equal(r.stdoutData.toString(), 'hi\n');
  assert.equal((await client.getRun(r.run.id)).status, 'ok');
  const pkg = JSON.parse(fs.readFileSync(path.join(here, '..', 'package.json'), 'utf8'));
  assert.deepEqual(await client.version(), { version: pkg.version, api: 1 });
  assert.equal(await client.health(), true);
  const gone = new Client({ socketPath: path.join(dir, 'none.sock') });
  await assert.rejects(gone.sessions(), (e) => e instanceof ServerUnreachable && e.message.includes('none.sock'));
});

test('TCP with a bearer token', { skip: noServe }, async (t) => {
  const port = await new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
  });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-node-tok-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const tok = path.join(dir, 'token');
  fs.writeFileSync(tok, 'tok-0123456789abcdef-node\n', { mode: 0o600 });
  const ceil = path.join(dir, 'ceiling.json');
  fs.writeFileSync(ceil, '{"limits": {"wall_time": "1h"}}\n');
  const up = () => new Promise((resolve) => {
    const c = net.connect(port, '127.0.0.1', () => { c.destroy(); resolve(true); });
    c.on('error', () => resolve(false));
  });
  await serve(t, ['--listen', `127.0.0.1:${port}`, '--token-file', tok, '--ceiling', ceil], up);
  const url = `http://127.0.0.1:${port}`;
  await assert.rejects(new Client({ url, token: 'wrong-token-0123456789' }).version(), (e) => e.status === 401);
  assert.equal(await new Client({ url, token: 'wrong-token-0123456789' }).health(), true);
  const c = new Client({ url, token: 'tok-0123456789abcdef-node' });
  await c.withSession({}, async (s) => {
    assert.equal((await s.exec(['/bin/sh', '-c', 'echo hi'])).text, 'hi\n');
    const p = await s.pty(['/bin/cat']);
    try {
      await p.write('ping\n');
      let got = '';
      for await (const d of p) {
        got += d.toString();
        if (got.split('ping').length > 2) break;
      }
      assert.equal(got.split('ping').length - 1, 2);
    } finally {
      p.close();
    }
  });
});

test('ndjson: lines split anywhere', async () => {
  async function* pieces() {
    const text = '{"type":"started","exec":"e-1"}\n{"type":"stdout","data_b64":"aGk="}\n\n{"type":"result","status":"ok"}';
    for (const c of text) yield Buffer.from(c);
  }
  const evs = [];
  for await (const ev of ndjson(pieces())) evs.push(ev);
  assert.deepEqual(evs.map((e) => e.type), ['started', 'stdout', 'result']);
  assert.equal(evs[1].data.toString(), 'hi');
});

test('session snapshot, restore and fork', { skip: noServe }, async (t) => {
  const { client } = await serve(t);
  const s = await client.session({});
  assert.ok((await s.exec(['/bin/sh', '-c', 'echo one > a'])).ok);
  let p;
  try {
    p = await s.snapshot();
  } catch (e) {
    await s.close();
    if (/workspace mode is direct/.test(String(e))) return t.skip(`no overlay workspace here: ${e}`);
    throw e;
  }
  assert.match(p.snapshot, /^p-[0-9a-f]{16}$/);
  assert.equal(p.bytes, 4);
  assert.ok((await s.exec(['/bin/sh', '-c', 'echo two > a; echo b > b'])).ok);
  const ch = await s.changes(p.snapshot);
  assert.equal(ch.snapshot, p.snapshot);
  assert.deepEqual(ch.changes.map((x) => x.path), ['a']);
  assert.deepEqual((await s.changes()).changes.map((x) => x.path), ['a', 'b']);
  const cs = await s.snapshotChangeset(p.snapshot);
  assert.equal(cs.snapshot, p.snapshot);
  assert.equal(cs.files, 1);
  assert.match(cs.dir, /\/\.cordon-changes/);
  const bg = await s.exec(['sleep', '100'], { background: true });
  assert.deepEqual(await s.restore(p.snapshot), { restored: p.snapshot });
  assert.equal((await bg.wait()).status, 'restored');
  assert.equal((await s.files.read('a')).toString(), 'one\n');
  const f = await s.fork();
  assert.notEqual(f.id, s.id);
  assert.ok((await f.exec(['/bin/sh', '-c', 'echo fork > a'])).ok);
  assert.equal((await s.files.read('a')).toString(), 'one\n');
  await f.close();
  assert.equal((await s.snapshots()).snapshots.length, 1);
  assert.deepEqual(await s.deleteSnapshot(p.snapshot), { deleted: p.snapshot });
  await s.close();
});

test('session pause and resume', { skip: noServe }, async (t) => {
  const { client } = await serve(t);
  const s = await client.session({});
  let p;
  try {
    p = await s.pause();
  } catch (e) {
    await s.close();
    if (/no freezer/.test(String(e))) return t.skip(`no freezer for a session here: ${e}`);
    throw e;
  }
  // frozen: every process frozen within 2 s (not always, on a loaded v1 freezer)
  assert.equal(p.state, 'paused');
  assert.equal(typeof p.frozen, 'boolean');
  await assert.rejects(s.exec(['true']), (e) => e instanceof CordonError && e.status === 409);
  assert.equal((await s.resume()).state, 'running');
  assert.ok((await s.exec(['true'])).ok);
  const report = await s.close();
  assert.equal(report.session.paused.length, 1);
});
