#!/usr/bin/env python3
"""harness.py: run the tasks of a small SWE-style dataset (make_dataset.sh)
through one or several `cordon serve`s and print a table of verdicts.

Each task is judged as SWE-bench does: its check (the task's test, the
policy's "check": verdicts.task in the report) must fail on the repository
as it is ("before") and pass once the candidate patch is applied ("after").
Every run is a one-shot run (POST /v1/runs) in the task's own image root
(the policy's "root"): the command copies the repository from the image
into the run's workspace and applies the patch (given on stdin); cordon
then runs the check in a fresh boundary over what the command left.

    make_dataset.sh /tmp/ds
    harness.py --dataset /tmp/ds --server /run/cordon.sock
    harness.py --dataset /tmp/ds --server https://10.0.0.5:8443 \\
               --server https://10.0.0.6:8443 --token-file tok --ca ca.crt

With several --server the tasks are spread over them (cordon.Pool: the one
with the fewest of this harness's tasks under way takes the next, ties in
turn); both runs of a task go to the same server.

--agent gold applies the dataset's own fix (gold.patch), a stand-in for a
model's patch; --agent none applies nothing (every task unresolved).
Exit status: 0 when every task got a verdict, 1 when a run failed to give
one (an error of the server or of cordon: the table says which), 2 usage."""
import argparse
import concurrent.futures
import json
import os
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))
import cordon  # noqa: E402


def load_tasks(dataset, n):
    tasks = []
    for d in sorted(pathlib.Path(dataset).iterdir()):
        f = d / "task.json"
        if f.is_file():
            tasks.append(json.loads(f.read_text()))
    return tasks[:n] if n else tasks


def judge(pool, task, patch, wall):
    """(server of the after run, before, after, verdict) of one task."""
    policy = {"root": task["root"], "check": task["check"], "limits": {"wall_time": wall}}
    copy = f"cp -R {task['repo']}/. ."
    out = {"id": task["id"]}
    try:
        # Both runs of a task on one server (held: counted as one under way).
        with pool.client() as c:
            before = c.run(["/bin/sh", "-c", copy], policy=policy)
            after = c.run(["/bin/sh", "-c", copy + (" && patch -p1" if patch else "")],
                          policy=policy, stdin=patch or None)
            server = c.address
    except cordon.CordonError as e:
        out.update(server="-", before="-", after="-", verdict="error", why=str(e))
        return out
    out.update(server=server, before=before.verdicts.task, after=after.verdicts.task)
    if after.status != "ok":
        # The patch did not apply, or the run was stopped: the report says.
        out["why"] = f"after: status {after.status}"
    if before.verdicts.task == "pass":
        out["verdict"] = "invalid"  # the test does not show the bug
    elif before.verdicts.task == "fail" and after.verdicts.task == "pass" and after.status == "ok":
        out["verdict"] = "resolved"
    elif after.verdicts.task in ("pass", "fail"):
        out["verdict"] = "unresolved"
    else:
        out["verdict"] = "error"
        out.setdefault("why", f"after: task verdict {after.verdicts.task}")
    return out


def table(rows, servers):
    w = max([4] + [len(r["id"]) for r in rows])
    ws = max([6] + [len(r["server"]) for r in rows])
    lines = [f"{'TASK':<{w}}  {'SERVER':<{ws}}  {'BEFORE':<7} {'AFTER':<7} VERDICT"]
    for r in rows:
        lines.append(f"{r['id']:<{w}}  {r['server']:<{ws}}  {r['before']:<7} {r['after']:<7} {r['verdict']}"
                     + (f"  ({r['why']})" if r.get("why") else ""))
    counts = {}
    for r in rows:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    lines.append(f"{len(rows)} tasks: " + ", ".join(f"{n} {v}" for v, n in sorted(counts.items())))
    per = {s: 0 for s in servers}
    for r in rows:
        if r["server"] in per:
            per[r["server"]] += 1
    lines.append("tasks per server: " + ", ".join(f"{s} {n}" for s, n in per.items()))
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", required=True, help="the directory make_dataset.sh made")
    ap.add_argument("--server", action="append", required=True,
                    help="a cordon serve: its socket path or https://HOST:PORT (repeatable)")
    ap.add_argument("--token-file", help="the bearer token of the TCP servers")
    ap.add_argument("--ca", help="the CA (PEM) of https:// servers' certificates")
    ap.add_argument("--agent", choices=["gold", "none"], default="gold")
    ap.add_argument("-n", type=int, default=0, help="the first N tasks only")
    ap.add_argument("--jobs", type=int, default=0, help="tasks at once (default: 2 per server; 1: in turn)")
    ap.add_argument("--wall-time", default="60s", help="each run's wall-clock limit")
    ap.add_argument("--json", action="store_true", help="the rows as JSON after the table")
    a = ap.parse_args(argv)
    token = pathlib.Path(a.token_file).read_text().splitlines()[0] if a.token_file else None
    pool = cordon.Pool(a.server, token=token, ca=a.ca)
    tasks = load_tasks(a.dataset, a.n)
    if not tasks:
        print(f"harness: {a.dataset}: no task (run make_dataset.sh)", file=sys.stderr)
        return 2
    jobs = a.jobs or 2 * len(a.server)
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
        futs = [ex.submit(judge, pool, t,
                          pathlib.Path(t["patch"]).read_text() if a.agent == "gold" else None, a.wall_time)
                for t in tasks]
        rows = [f.result() for f in futs]
    print(table(rows, [c.address for c in pool.clients]))
    if a.json:
        print(json.dumps(rows))
    return 1 if any(r["verdict"] == "error" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
