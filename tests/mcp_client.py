#!/usr/bin/env python3
"""A hand-written MCP client for cordon mcp's edge cases (tests/integration/mcp.sh).

usage: mcp_client.py CORDON CASE [cordon mcp options...]

Starts `CORDON mcp`, speaks newline-delimited JSON-RPC 2.0 to it and checks one
case. Every line the server writes must be one JSON-RPC message (its stdout is
the protocol's alone). Exit 0 when the case holds, 1 with the reason."""
import hashlib
import json
import os
import select
import subprocess
import sys
import time

WAIT = 120  # seconds for any one answer: a loaded machine, not a threshold


class Fail(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Fail(what)


class Mcp:
    def __init__(self, cordon, args):
        self.err = open(os.environ.get("T_TMP", "/tmp") + "/mcp.stderr", "w")
        self.p = subprocess.Popen([cordon, "mcp"] + args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=self.err)
        self.buf = b""
        self.raw = b""  # every byte of cordon mcp's stdout
        self.next_id = 1
        self.notes = []  # notifications, in order

    def send(self, obj):
        self.send_raw(json.dumps(obj).encode() + b"\n")

    def send_raw(self, data):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def recv(self, wait=WAIT):
        """The next message; every line must be a JSON-RPC 2.0 object."""
        end = time.monotonic() + wait
        while b"\n" not in self.buf:
            left = end - time.monotonic()
            check(left > 0, "no message from cordon mcp in time")
            r, _, _ = select.select([self.p.stdout], [], [], left)
            if r:
                chunk = os.read(self.p.stdout.fileno(), 65536)
                check(chunk, "cordon mcp closed its standard output")
                self.buf += chunk
                self.raw += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        try:
            m = json.loads(line)
        except ValueError:
            raise Fail("not a JSON line on cordon mcp's stdout: %r" % line[:200])
        check(isinstance(m, dict) and m.get("jsonrpc") == "2.0", "not a JSON-RPC message: %r" % line[:200])
        return m

    def request(self, method, params=None, meta=None):
        i = self.next_id
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": i, "method": method}
        if params is not None:
            msg["params"] = dict(params)
        if meta:
            msg.setdefault("params", {})["_meta"] = meta
        self.send(msg)
        return i

    def answer(self, i, wait=WAIT):
        while True:
            m = self.recv(wait)
            if "id" in m and m["id"] == i and "method" not in m:
                return m
            if "method" in m and "id" not in m:
                self.notes.append(m)
            else:
                raise Fail("unexpected message: %r" % m)

    def call(self, method, params=None, meta=None):
        return self.answer(self.request(method, params, meta))

    def initialize(self, version="2025-11-25"):
        r = self.call("initialize", {"protocolVersion": version, "capabilities": {},
                                     "clientInfo": {"name": "mcp_client.py", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return r

    def tool(self, name, args, meta=None):
        r = self.call("tools/call", {"name": name, "arguments": args}, meta)
        check("result" in r, "tools/call %s: %r" % (name, r))
        res = r["result"]
        if not res.get("isError"):
            sc = res.get("structuredContent")
            check(isinstance(sc, dict), "%s: no structuredContent: %r" % (name, res))
            check(json.loads(res["content"][0]["text"]) == sc, "%s: text content is not the structured data" % name)
        return res

    def close(self):
        self.p.stdin.close()
        rest = self.p.stdout.read()
        self.raw += rest
        for line in rest.splitlines():
            check(json.loads(line).get("jsonrpc") == "2.0", "after the end: %r" % line[:200])
        rc = self.p.wait(WAIT)
        check(rc == 0, "cordon mcp exited %d" % rc)


def sc(res):
    check(not res.get("isError"), "isError: %r" % res)
    return res["structuredContent"]


def proc_with(marker):
    """pids whose command line has marker (the test's own, unique)."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/cmdline" % d, "rb") as f:
                    if marker.encode() in f.read():
                        out.append(int(d))
            except OSError:
                pass
    return out


def wait_until(cond, what, secs=WAIT):
    end = time.monotonic() + secs
    while not cond():
        check(time.monotonic() < end, what)
        time.sleep(0.1)


def case_initialize(m):
    r = m.initialize("2025-11-25")["result"]
    check(r["protocolVersion"] == "2025-11-25", "version %r" % r)
    check(r["serverInfo"]["name"] == "cordon" and "tools" in r["capabilities"], "info %r" % r)
    check(m.call("ping")["result"] == {}, "ping")


def case_initialize_older(m):
    r = m.initialize("2025-06-18")["result"]
    check(r["protocolVersion"] == "2025-06-18", "an older version is answered with itself: %r" % r)
    r = m.call("initialize", {"protocolVersion": "1999-01-01", "capabilities": {},
                              "clientInfo": {"name": "x", "version": "1"}})["result"]
    check(r["protocolVersion"] == "2025-11-25", "an unknown one with the newest: %r" % r)


def case_tools_list(m):
    m.initialize()
    tools = m.call("tools/list")["result"]["tools"]
    names = {t["name"] for t in tools}
    want = {"run", "session_open", "session_exec", "file_write", "file_read", "file_list", "session_close",
            "changes", "session_snapshot", "session_restore", "session_fork",
            "session_snapshot_changeset"}
    check(want <= names, "tools %r" % names)
    for t in tools:
        check(len(t["description"]) > 40, "%s: a description an agent can act on" % t["name"])
        check(t["inputSchema"]["type"] == "object" and t["outputSchema"]["type"] == "object", t["name"])


def case_run_echo(m):
    m.initialize()
    r = m.tool("run", {"command": "echo hi"})
    s = sc(r)
    check(s["status"] == "ok" and s["exit_code"] == 0 and s["stdout"] == "hi\n", "run echo hi: %r" % s)
    check(s["verdicts"]["containment"] == "clean" and s["denials"] == [], "verdicts %r" % s)
    s = sc(m.tool("run", {"argv": ["sh", "-c", "cat; exit 3"], "stdin": "in\n"}))
    check(s["status"] == "exit-nonzero" and s["exit_code"] == 3 and s["stdout"] == "in\n",
          "exit 3 is a normal result: %r" % s)
    r = m.tool("run", {"command": "true", "argv": ["true"]})
    check(r["isError"] and "one of them" in r["content"][0]["text"], "bad arguments are a tool error: %r" % r)
    r = m.call("tools/call", {"name": "nope", "arguments": {}})
    check(r.get("error", {}).get("code") == -32602, "unknown tool: %r" % r)


def case_run_denied(m):
    m.initialize()
    s = sc(m.tool("run", {"command": "echo x > /root/cordon-mcp-denied; echo done"}))
    check(s["stdout"] == "done\n", "the command went on: %r" % s)
    check("denied file: /root/cordon-mcp-denied" in s["denials"], "a denial line: %r" % s["denials"])
    check(s["verdicts"]["containment"] == "violations", "verdict %r" % s)
    check(not os.path.exists("/root/cordon-mcp-denied"), "nothing written")


def case_malformed(m):
    m.initialize()
    m.send_raw(b'{"jsonrpc": "2.0", "id": 7, "method": \n')
    r = m.recv()
    check(r.get("error", {}).get("code") == -32700 and r["id"] is None, "malformed JSON: %r" % r)
    for raw, what in ((b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]\n', "a batch"),
                      (b'{"jsonrpc":"1.0","id":8,"method":"ping"}\n', "jsonrpc 1.0"),
                      (b'{"jsonrpc":"2.0","id":9,"method":"ping","params":[1]}\n', "params an array"),
                      (b'"just a string"\n', "not an object")):
        m.send_raw(raw)
        r = m.recv()
        check(r.get("error", {}).get("code") == -32600, "%s: %r" % (what, r))
    r = m.call("no/such/method")
    check(r.get("error", {}).get("code") == -32601, "unknown method: %r" % r)
    check(m.call("ping")["result"] == {}, "still working")


def case_oversized(m):
    m.initialize()
    big = b'{"jsonrpc":"2.0","id":5,"method":"ping","params":{"x":"' + b"a" * (9 << 20) + b'"}}\n'
    m.send_raw(big)
    r = m.recv()
    check(r.get("error", {}).get("code") == -32600 and "too large" in r["error"]["message"], "oversized: %r" % r)
    check(m.call("ping")["result"] == {}, "still working after an oversized line")


def case_cancel(m):
    m.initialize()
    marker = "417.%d" % os.getpid()
    i = m.request("tools/call", {"name": "run", "arguments": {"argv": ["sleep", marker]}})
    wait_until(lambda: proc_with(marker), "the run's sleep never started")
    m.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": i, "reason": "test"}})
    wait_until(lambda: not proc_with(marker), "the cancelled run's process is still there")
    # no answer for a cancelled request; the server goes on
    j = m.request("ping")
    r = m.answer(j)
    check(r["result"] == {}, "ping after cancel: %r" % r)


def case_progress(m):
    m.initialize()
    res = m.tool("run", {"command": "echo one; echo two >&2; echo three"}, meta={"progressToken": "tok-1"})
    s = sc(res)
    check(s["stdout"] == "one\nthree\n", "run: %r" % s)
    prog = [n for n in m.notes if n["method"] == "notifications/progress"]
    check(prog, "no progress notifications")
    check(all(n["params"]["progressToken"] == "tok-1" for n in prog), "token %r" % prog)
    values = [n["params"]["progress"] for n in prog]
    check(values == sorted(set(values)), "progress grows: %r" % values)
    text = "".join(n["params"].get("message", "") for n in prog)
    check("one" in text and "two" in text, "the output in progress: %r" % text)
    m.notes.clear()
    sc(m.tool("run", {"command": "echo quiet"}))
    check(not m.notes, "no progress without a progressToken: %r" % m.notes)


def case_stdout_pure(m):
    m.initialize()
    garbage = ('printf \'{"jsonrpc":"2.0","id":1,"result":{}}\\n\\033[2J\\r\\n}]\\n\'; '
               'printf \'{"jsonrpc":"2.0","method":"x"}\\n\' >&2; head -c 200000 /dev/zero | tr "\\0" "\\n"')
    s = sc(m.tool("run", {"command": garbage}, meta={"progressToken": 3}))
    check(s["stdout"].startswith('{"jsonrpc":"2.0","id":1,"result":{}}\n'), "the output, as data: %r" % s["stdout"][:80])
    check(s["stdout_truncated"] and s["stdout_bytes"] > len(s["stdout"]), "cut, and said: %r" % {
        k: s[k] for k in ("stdout_bytes", "stdout_truncated")})
    check(m.call("ping")["result"] == {}, "ping")  # and every line so far parsed (recv)
    # descriptor 1 of cordon mcp and of its private server is standard
    # error, not the protocol's pipe: nothing but a message can reach it
    pid = m.p.pid
    kids = []
    for t in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/children" % (pid, t)) as f:
            kids += [int(k) for k in f.read().split()]
    check(kids, "the private server is a child of cordon mcp")
    for p in [pid] + kids:
        one, two = (os.readlink("/proc/%d/fd/%d" % (p, fd)) for fd in (1, 2))
        check(one == two, "pid %d: descriptor 1 is %s, not standard error (%s)" % (p, one, two))


def case_session(m):
    m.initialize()
    s = sc(m.tool("session_open", {}))
    sid = s["session"]
    check(sid.startswith("s-") and s["workspace"], "open %r" % s)
    w = sc(m.tool("file_write", {"session": sid, "path": "notes/a.txt", "content": "hello\n"}))
    check(w["bytes"] == 6, "write %r" % w)
    w = sc(m.tool("file_write", {"session": sid, "path": "b.bin", "content_b64": "AAEC/w=="}))
    check(w["bytes"] == 4, "write b64 %r" % w)
    e = sc(m.tool("session_exec", {"session": sid, "command": "cat notes/a.txt; echo more >> notes/a.txt; pwd",
                                   "env": {"K": "V"}}))
    check(e["stdout"] == "hello\n" + s["cwd"] + "\n" and e["status"] == "ok", "exec %r" % e)
    e = sc(m.tool("session_exec", {"session": sid, "argv": ["sh", "-c", "echo $K"], "env": {"K": "V"}, "cwd": "notes"}))
    check(e["stdout"] == "V\n", "exec env %r" % e)
    r = sc(m.tool("file_read", {"session": sid, "path": "notes/a.txt"}))
    check(r["content"] == "hello\nmore\n" and r["truncated"] is False, "read %r" % r)
    r = sc(m.tool("file_read", {"session": sid, "path": "b.bin"}))
    check(r.get("content_b64") == "AAEC/w==", "read bytes %r" % r)
    ls = sc(m.tool("file_list", {"session": sid}))
    names = sorted(e["name"] for e in ls["entries"])
    check(names == ["b.bin", "notes"], "list %r" % names)
    r = m.tool("file_read", {"session": sid, "path": "/etc/shadow"})
    check(r["isError"], "a file the session may not read: %r" % r)
    c = sc(m.tool("session_close", {"session": sid}))
    check(c["status"] == "ok" and c["session"] == sid and c["execs"] == 2, "close %r" % c)
    check(any(ch["path"].endswith("notes/a.txt") for ch in c["changes"]), "changes %r" % c["changes"])
    r = m.tool("session_exec", {"session": sid, "command": "true"})
    check(r["isError"], "a closed session: %r" % r)


def case_eof_cleanup(m, by_signal=False):
    """Standard input's end (or SIGTERM): the call in flight is killed, the
    open session closed, the private server stopped and its directory
    removed."""
    m.initialize()
    s = sc(m.tool("session_open", {}))
    top = s["workspace"].split("/state/")[0]
    check(os.path.isdir(top), "the private server's directory %s" % top)
    marker = "418.%d" % os.getpid()
    m.request("tools/call", {"name": "session_exec", "arguments": {"session": s["session"], "argv": ["sleep", marker]}})
    wait_until(lambda: proc_with(marker), "the exec never started")
    if by_signal:
        m.p.terminate()
    else:
        m.p.stdin.close()
    check(m.p.wait(WAIT) == 0, "cordon mcp's exit status")
    check(not proc_with(marker), "the exec is gone")
    check(not os.path.exists(top), "%s removed: %r" % (top, os.listdir(top) if os.path.exists(top) else None))


def case_sigterm_cleanup(m):
    case_eof_cleanup(m, by_signal=True)


def case_max_sessions(m):
    """--max-sessions 1: a second session_open is a tool error, until the
    first is closed."""
    m.initialize()
    a = sc(m.tool("session_open", {}))
    r = m.tool("session_open", {})
    check(r["isError"] and "at most 1 sessions" in r["content"][0]["text"], "the bound: %r" % r)
    sc(m.tool("session_close", {"session": a["session"]}))
    b = sc(m.tool("session_open", {}))
    sc(m.tool("session_close", {"session": b["session"]}))


def case_max_sessions_at_once(m):
    """--max-sessions 1 with --server (whose own bound is larger): six
    session_open calls sent at once open one session, the others are the
    bound's tool error (the check and the count are one step)."""
    m.initialize()
    ids = [m.request("tools/call", {"name": "session_open", "arguments": {}}) for _ in range(6)]
    answers = {}
    while len(answers) < len(ids):  # in any order: each call is a thread
        a = m.recv()
        if a.get("id") in ids and "method" not in a:
            answers[a["id"]] = a["result"]
    got = [answers[i] for i in ids]
    opened = [r["structuredContent"]["session"] for r in got if not r.get("isError")]
    refused = [r for r in got if r.get("isError") and "at most 1 sessions" in r["content"][0]["text"]]
    for sid in opened:
        sc(m.tool("session_close", {"session": sid}))
    check(len(opened) == 1 and len(refused) == 5, "opened %d, refused %d: %r" % (len(opened), len(refused), got))


def case_max_sessions_ended(m):
    """--max-sessions 1: a session that ended by itself (its idle_timeout)
    no longer holds the place: session_close says it had ended, and a new
    session opens (it was counted for ever: every session_open refused).
    Waited for without a call to it (a call would keep it alive): its
    workspace goes when it ends."""
    m.initialize()
    a = sc(m.tool("session_open", {"idle_timeout": "1s"}))
    wait_until(lambda: not os.path.exists(a["workspace"]), "the session did not end by its idle_timeout")
    r = m.tool("session_close", {"session": a["session"]})
    check(r["isError"] and "already ended" in r["content"][0]["text"], "closing an ended session: %r" % r)
    b = sc(m.tool("session_open", {"idle_timeout": "1s"}))
    wait_until(lambda: not os.path.exists(b["workspace"]), "the second session did not end by its idle_timeout")
    c = sc(m.tool("session_open", {}))  # without a session_close of b
    sc(m.tool("session_close", {"session": c["session"]}))


def case_options(m):
    """cordon mcp --workspace DIR --policy FILE (with env GREETING): the
    directory is the run's working directory, read-write; the policy is
    every call's that gives none, and a call's own replaces it."""
    ws = os.environ["MCP_WS"]
    m.initialize()
    s = sc(m.tool("run", {"command": "echo $GREETING; pwd; echo made > made.txt"}))
    check(s["stdout"] == "from-policy\n%s\n" % ws, "run: %r" % s)
    with open(os.path.join(ws, "made.txt")) as f:
        check(f.read() == "made\n", "the file reached the workspace")
    s = sc(m.tool("run", {"command": "echo ${GREETING:-none}", "policy": {"env": {"OTHER": "1"}}}))
    check(s["stdout"] == "none\n", "a call's policy replaces --policy's: %r" % s)
    r = m.tool("run", {"command": "true", "policy": {"nonsense": 1}})
    check(r["isError"] and "nonsense" in r["content"][0]["text"], "a bad policy is cordon's refusal: %r" % r)


def case_review(m):
    """--workspace DIR --review: a session's changes to DIR are shown by the
    changes tool (with a diff), and never reach DIR, not even at its close;
    a link the session planted is listed, not followed."""
    ws = os.environ["MCP_WS"]
    before = sorted(os.listdir(ws))
    m.initialize()
    s = sc(m.tool("session_open", {}))
    sid = s["session"]
    sc(m.tool("session_exec", {"session": sid, "command": "echo changed >> README && echo new > new.txt && "
                                                          "ln -s /etc/shadow evil"}))
    c = sc(m.tool("changes", {"session": sid}))
    got = sorted((ch["change"], ch["path"], ch["type"]) for ch in c["changes"])
    check(got == [("created", "evil", "other"), ("created", "new.txt", "file"), ("modified", "README", "file")],
          "changes %r" % got)
    sha = {ch["path"]: ch.get("sha256", "absent") for ch in c["changes"]}
    check(sha["new.txt"] == hashlib.sha256(b"new\n").hexdigest() and sha["README"] ==
          hashlib.sha256(b"hello\nchanged\n").hexdigest() and sha["evil"] is None, "sha256 %r" % sha)
    check(c.get("refused") == [] and c.get("protected") == [], "refused, protected: %r" % c)
    check("+changed" in c["diff"].splitlines() and "+++ b/new.txt" in c["diff"].splitlines(), "diff %r" % c["diff"])
    check("root:" not in c["diff"] and not c["diff_truncated"], "the link is not followed: %r" % c["diff"])
    r = sc(m.tool("session_close", {"session": sid}))
    check(sorted(os.listdir(ws)) == before, "the workspace is untouched: %r" % os.listdir(ws))
    with open(os.path.join(ws, "README")) as f:
        check(f.read() == "hello\n", "README untouched")
    r = m.tool("changes", {"session": sid})
    check(r["isError"] and "no open session" in r["content"][0]["text"], "a closed session: %r" % r)
    # a special file is listed in refused (an apply would never apply it)
    s = sc(m.tool("session_open", {}))
    sc(m.tool("session_exec", {"session": s["session"], "command": "mkfifo pipe"}))
    c = sc(m.tool("changes", {"session": s["session"]}))
    check(len(c["refused"]) == 1 and "pipe" in c["refused"][0], "refused %r" % c)
    sc(m.tool("session_close", {"session": s["session"]}))


def case_review_run(m):
    """--review: a run's changes are kept for the user, and its result says
    where (change_set), which cordon changes lists; a session_close too."""
    ws = os.environ["MCP_WS"]
    m.initialize()
    s = sc(m.tool("run", {"command": "echo new > new.txt; echo more >> README"}))
    cs = s.get("change_set")
    check(cs and cs["state"] == "kept" and cs["entries"] == 2 and os.path.isdir(cs["dir"]), "run: %r" % s)
    check(sorted(os.listdir(ws)) == ["README"], "nothing reached the workspace: %r" % os.listdir(ws))
    out = subprocess.run([os.environ["CORDON"], "changes", cs["dir"], "--json"], capture_output=True, text=True)
    check(out.returncode == 0, "cordon changes %s: %s" % (cs["dir"], out.stderr))
    got = sorted(ch["path"] for ch in json.loads(out.stdout)["changes"])
    check(got == ["README", "new.txt"], "cordon changes lists %r" % got)
    o = sc(m.tool("session_open", {}))
    sc(m.tool("session_exec", {"session": o["session"], "command": "echo s > s.txt"}))
    c = sc(m.tool("session_close", {"session": o["session"]}))
    cs2 = c.get("change_set")
    check(cs2 and cs2["state"] == "kept" and cs2["dir"] != cs["dir"] and os.path.isdir(cs2["dir"]), "close: %r" % c)
    m.close()
    check(os.path.isdir(cs["dir"]) and os.path.isdir(cs2["dir"]), "the change sets outlive cordon mcp")


def case_review_fresh(m):
    """A run in review mode without --workspace: its fresh workspace, and
    the change set in it, end with it; the result says so (no dir that is
    gone)."""
    m.initialize()
    s = sc(m.tool("run", {"command": "echo n > n.txt", "policy": {"filesystem": {"workspace_mode": "review"}}}))
    cs = s.get("change_set")
    check(cs and cs["state"] == "discarded" and cs["dir"] is None and "--workspace" in cs["reason"], "run: %r" % s)


def case_review_policy(m):
    """--review holds whatever policy a call gives: a workspace_mode of
    overlay or direct (which would apply the changes at the end, or at
    once), or an allow_weaker "workspace" (a fall-back to direct) is
    refused, and the workspace stays untouched."""
    ws = os.environ["MCP_WS"]
    before = sorted(os.listdir(ws))
    m.initialize()
    for pol in ({"filesystem": {"workspace_mode": "overlay"}}, {"filesystem": {"workspace_mode": "direct"}},
                {"enforcement": {"allow_weaker": ["workspace"]}}):
        r = m.tool("run", {"command": "echo leaked > leaked.txt", "policy": pol})
        check(r.get("isError") and "--review" in r["content"][0]["text"], "run with %r: %r" % (pol, r))
        r = m.tool("session_open", {"policy": pol})
        check(r.get("isError") and "--review" in r["content"][0]["text"], "session_open with %r: %r" % (pol, r))
    s = sc(m.tool("run", {"command": "echo kept > kept.txt",
                          "policy": {"filesystem": {"workspace_mode": "review"}}}))
    check(s["status"] == "ok", "review asked again is fine: %r" % s)
    check(sorted(os.listdir(ws)) == before, "the workspace is untouched: %r" % os.listdir(ws))


def case_review_huge(m):
    """A file the session made sparse and huge (1.2 MB of text, then a
    hole of 1 GiB) is not handed to diff, which would read all of it into
    the server's memory: the changes tool says it is too large to diff,
    and the rest of the diff is whole."""
    m.initialize()
    s = sc(m.tool("session_open", {}))
    sid = s["session"]
    sc(m.tool("session_exec", {"session": sid, "command": "echo small > a.txt && seq 200000 > big.txt && "
                                                          "truncate -s 1G big.txt"}))
    c = sc(m.tool("changes", {"session": sid}))
    lines = c["diff"].splitlines()
    check("+++ b/a.txt" in lines and "+small" in lines, "the small file's diff: %r" % c["diff"][:2000])
    check(any(l.startswith("Files /dev/null and b/big.txt differ: too large to diff") for l in lines),
          "the huge file is named, not diffed: %r" % c["diff"][:2000])
    check(not c["diff_truncated"] and c["diff_bytes"] < 4096, "diff %d bytes, truncated %r"
          % (c["diff_bytes"], c["diff_truncated"]))
    sc(m.tool("session_close", {"session": sid}))


def case_snapshot(m):
    """session_snapshot, session_restore, session_fork: back to a snapshot,
    and a fork whose writes its parent never sees."""
    m.initialize()
    sid = sc(m.tool("session_open", {}))["session"]
    sc(m.tool("file_write", {"session": sid, "path": "a.txt", "content": "one\n"}))
    p = sc(m.tool("session_snapshot", {"session": sid}))
    check(p["snapshot"].startswith("p-") and p["files"] == 1 and p["not_covered"] == [], "snapshot %r" % p)
    sc(m.tool("session_exec", {"session": sid, "command": "echo two > a.txt; echo b > b.txt"}))
    ch = sc(m.tool("changes", {"session": sid, "snapshot": p["snapshot"]}))
    check(ch["snapshot"] == p["snapshot"] and [x["path"] for x in ch["changes"]] == ["a.txt"] and "+one" in ch["diff"],
          "the snapshot's changes %r" % ch)
    k = sc(m.tool("session_snapshot_changeset", {"session": sid, "snapshot": p["snapshot"]}))
    check(k["snapshot"] == p["snapshot"] and k["files"] == 1 and "/.cordon-changes" in k["dir"], "the kept change set %r" % k)
    r = m.tool("session_snapshot_changeset", {"session": sid, "snapshot": "../x"})
    check(r["isError"] and "snapshot" in r["content"][0]["text"], "a bad snapshot id: %r" % r)
    r = m.tool("changes", {"session": sid, "snapshot": "../x"})
    check(r["isError"] and "snapshot" in r["content"][0]["text"], "a bad snapshot id: %r" % r)
    r = sc(m.tool("session_restore", {"session": sid, "snapshot": p["snapshot"]}))
    check(r == {"session": sid, "restored": p["snapshot"]}, "restore %r" % r)
    check(sc(m.tool("file_read", {"session": sid, "path": "a.txt"}))["content"] == "one\n", "restored a.txt")
    f = sc(m.tool("session_fork", {"session": sid}))
    check(f["session"] != sid and f["forked_from"] == sid, "fork %r" % f)
    sc(m.tool("session_exec", {"session": f["session"], "command": "echo fork > a.txt"}))
    check(sc(m.tool("file_read", {"session": sid, "path": "a.txt"}))["content"] == "one\n", "the parent unchanged")
    check(sc(m.tool("file_read", {"session": f["session"], "path": "a.txt"}))["content"] == "fork\n", "the fork's")
    r = m.tool("session_restore", {"session": sid, "snapshot": "p-0123456789abcdef"})
    check(r["isError"] and "no such snapshot" in r["content"][0]["text"], "an unknown snapshot: %r" % r)
    sc(m.tool("session_close", {"session": f["session"]}))
    sc(m.tool("session_close", {"session": sid}))


def case_server(m):
    """--server SOCKET: the calls go to that cordon serve."""
    m.initialize()
    s = sc(m.tool("session_open", {}))
    check(s["workspace"].startswith(os.environ["MCP_STATE"]), "the given server's session: %r" % s)
    sc(m.tool("session_close", {"session": s["session"]}))


SECRET = "cordon-mcp-s3cr3t-7f3a9c21"


def case_redact(m):
    """A policy secret (from a file, --policy) printed by the command, as
    is, in base64 and hex, by run and session_exec, with progress asked
    for: the result's text and structuredContent carry [REDACTED:TOKEN],
    and no byte of cordon mcp's stdout ever carries the value."""
    import base64
    m.initialize()
    show = 'echo "v=$TOKEN"; printf %s "$TOKEN" | base64; printf %s "$TOKEN" | od -An -tx1 | tr -d " \\n"; echo; echo "e=$TOKEN" >&2'
    forms = [SECRET, base64.b64encode(SECRET.encode()).decode(), SECRET.encode().hex()]
    res = m.tool("run", {"command": show}, meta={"progressToken": "r"})
    s = sc(res)
    check("v=[REDACTED:TOKEN]" in s["stdout"] and "e=[REDACTED:TOKEN]" in s["stderr"], "run: %r" % s)
    o = sc(m.tool("session_open", {}))
    e = m.tool("session_exec", {"session": o["session"], "command": show}, meta={"progressToken": "e"})
    check("v=[REDACTED:TOKEN]" in sc(e)["stdout"], "session_exec: %r" % e)
    check(any(n["method"] == "notifications/progress" for n in m.notes), "progress was sent")
    sc(m.tool("session_close", {"session": o["session"]}))
    for r in (res, e):
        for f in forms:
            check(f not in json.dumps(r), "the value (%s) in a result: %r" % (f, r))
    m.close()
    for f in forms:
        check(f.encode() not in m.raw, "the value (%s) on cordon mcp's stdout" % f)


def case_timeouts(m):
    """run's and session_exec's timeout kill the command past it (status
    timeout, a normal result); a session past its idle_timeout is gone and
    the next call on it says so."""
    m.initialize()
    marker = "419.%d" % os.getpid()
    s = sc(m.tool("run", {"argv": ["sleep", marker], "timeout": "1s"}))
    check(s["status"] == "timeout", "run past its timeout: %r" % s)
    wait_until(lambda: not proc_with(marker), "the run's sleep is still there")
    o = sc(m.tool("session_open", {}))
    s = sc(m.tool("session_exec", {"session": o["session"], "argv": ["sleep", marker], "timeout": "1s"}))
    check(s["status"] == "timeout", "session_exec past its timeout: %r" % s)
    s = sc(m.tool("session_exec", {"session": o["session"], "command": "echo alive"}))
    check(s["stdout"] == "alive\n", "the session lives on: %r" % s)
    sc(m.tool("session_close", {"session": o["session"]}))
    o = sc(m.tool("session_open", {"idle_timeout": "1s"}))
    wait_until(lambda: not os.path.exists(o["workspace"]), "the session did not end by its idle_timeout")
    for tool, a in (("session_exec", {"command": "true"}), ("file_read", {"path": "x"}),
                    ("file_write", {"path": "x", "content": "y"}), ("file_list", {})):
        a["session"] = o["session"]
        r = m.tool(tool, a)
        check(r.get("isError") and "ended by itself" in r["content"][0]["text"]
              and "session_open" in r["content"][0]["text"], "%s on an ended session: %r" % (tool, r))


def case_ceiling(m):
    """--ceiling FILE (no network): a call's policy beyond it is cordon's
    refusal (isError) naming the excess; within it, the call runs."""
    m.initialize()
    for tool in ("run", "session_open"):
        a = {"policy": {"network": {"allow": ["example.com:443"]}}}
        if tool == "run":
            a["command"] = "echo no"
        r = m.tool(tool, a)
        t = r["content"][0]["text"]
        check(r.get("isError") and "unauthorized" in t and "example.com:443" in t, "%s beyond: %r" % (tool, r))
    s = sc(m.tool("run", {"command": "echo yes", "policy": {"limits": {"pids": 64}}}))
    check(s["stdout"] == "yes\n", "within: %r" % s)


def case_tcp(m):
    """--server http://127.0.0.1:PORT --token-file F: run, a session and
    its files through that server."""
    m.initialize()
    s = sc(m.tool("run", {"command": "echo over tcp"}))
    check(s["stdout"] == "over tcp\n" and s["status"] == "ok", "run: %r" % s)
    o = sc(m.tool("session_open", {}))
    check(o["workspace"].startswith(os.environ["MCP_STATE"]), "the given server's session: %r" % o)
    sc(m.tool("file_write", {"session": o["session"], "path": "f", "content": "tcp\n"}))
    e = sc(m.tool("session_exec", {"session": o["session"], "command": "cat f"}))
    check(e["stdout"] == "tcp\n", "exec: %r" % e)
    sc(m.tool("session_close", {"session": o["session"]}))


def case_statuses(m):
    """signaled, start-error and output-limit are normal results (isError
    false), the status in structuredContent."""
    m.initialize()
    s = sc(m.tool("run", {"command": "kill -KILL $$"}))
    check(s["status"] == "signaled" and s["signal"] in ("KILL", "SIGKILL"), "signaled: %r" % s)
    s = sc(m.tool("run", {"argv": ["/no/such/command-%d" % os.getpid()]}))
    check(s["status"] == "start-error" and s.get("error"), "start-error: %r" % s)
    s = sc(m.tool("run", {"command": "head -c 300000 /dev/zero", "policy": {"limits": {"output": "64K"}}}))
    check(s["status"] == "output-limit", "run output-limit: %r" % {k: s[k] for k in s if k != "stdout"})
    o = sc(m.tool("session_open", {"policy": {"limits": {"output": "64K"}}}))
    for a, want in (({"command": "kill -KILL $$"}, "signaled"),
                    ({"argv": ["/no/such/command-%d" % os.getpid()]}, "start-error"),
                    ({"command": "head -c 300000 /dev/zero"}, "output-limit")):
        a["session"] = o["session"]
        s = sc(m.tool("session_exec", a))
        check(s["status"] == want, "session_exec %r: %r" % (a, {k: s[k] for k in s if k != "stdout"}))
        if want == "output-limit":
            break
    m.tool("session_close", {"session": o["session"]})


def main():
    cordon, case = sys.argv[1], sys.argv[2]
    m = Mcp(cordon, sys.argv[3:])
    try:
        globals()["case_" + case](m)
        if m.p.returncode is None:
            m.close()
    except Fail as e:
        print("FAIL %s: %s" % (case, e))
        try:
            m.p.terminate()  # it cleans up as at its input's end
            m.p.wait(WAIT)
        except (OSError, subprocess.TimeoutExpired):
            m.p.kill()
        m.p.wait()
        m.err.flush()
        with open(m.err.name) as f:
            sys.stdout.write("cordon mcp stderr:\n" + f.read()[-2000:])
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
