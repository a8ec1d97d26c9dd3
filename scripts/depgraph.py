#!/usr/bin/env python3
"""The link-level dependency graph of lib/ and its cycles.

Runs nm over the objects meson built for the library (BUILD/libcordon*.a.p/)
and for the OCI runtime's lib/oci-*.c (BUILD/cordon.p/),
maps each undefined symbol to the object that defines it, and prints one line
per file: the lib files whose symbols it uses. Then every strongly connected
component of more than one file (a cycle at link level), or a file that is
its own. Exit status: 0 no cycle, 1 a cycle, 2 could not look (no objects,
nm failed).

usage: scripts/depgraph.py [BUILD]   (BUILD defaults to build)
       --quiet: print the cycles alone (and "no cycle")
Run by `make analyze` (over build-analyze) and `make depgraph` (over BUILD).
"""
import glob
import os
import subprocess
import sys


def objects(build):
    # The library's, and the OCI runtime's lib/oci-*.c (built into
    # cordon-oci and cordon, not into the library; cordon has them all).
    return sorted(glob.glob(os.path.join(build, "libcordon*.a.p", "*.o")) +
                  glob.glob(os.path.join(build, "cordon.p", "lib_oci-*.o")))


def name_of(obj):
    # meson names lib/foo.c's object lib_foo.c.o
    base = os.path.basename(obj)
    if base.endswith(".o"):
        base = base[:-2]
    if base.startswith("lib_"):
        base = "lib/" + base[4:]
    return base


def read_symbols(obj):
    out = subprocess.run(["nm", "-P", "--no-sort", obj], check=True,
                         capture_output=True, text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        sym, kind = parts[0], parts[1]
        if kind in ("U", "w", "v"):     # undefined, weak undefined
            undefined.add(sym)
        elif kind.isupper():            # global: text, data, bss, common...
            defined.add(sym)
    return defined, undefined


def tarjan(nodes, edges):
    index, low, onstack, stack, out = {}, {}, set(), [], []
    counter = [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        onstack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in onstack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                onstack.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            strong(v)
    return out


def main(argv):
    quiet = "--quiet" in argv
    args = [a for a in argv[1:] if a != "--quiet"]
    build = args[0] if args else "build"
    objs = objects(build)
    if not objs:
        print(f"depgraph: no library objects under {build}/libcordon*.a.p/ "
              "(build first: make all)", file=sys.stderr)
        return 2
    defs, uses = {}, {}
    where = {}
    try:
        for o in objs:
            n = name_of(o)
            d, u = read_symbols(o)
            defs[n], uses[n] = d, u
            for s in d:
                where.setdefault(s, set()).add(n)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"depgraph: nm: {e}", file=sys.stderr)
        return 2
    edges = {}
    via = {}
    for n in sorted(uses):
        for s in uses[n]:
            for m in where.get(s, ()):
                if m != n:
                    edges.setdefault(n, set()).add(m)
                    via.setdefault((n, m), set()).add(s)
    if not quiet:
        for n in sorted(defs):
            print(f"{n}: {' '.join(sorted(edges.get(n, ())))}")
    cycles = [c for c in tarjan(defs.keys(), edges) if len(c) > 1]
    for c in cycles:
        print(f"depgraph: cycle of {len(c)} files: {' '.join(c)}")
        members = set(c)
        for n in c:
            for m in sorted(edges.get(n, set()) & members):
                syms = sorted(via[(n, m)])
                more = f" (+{len(syms) - 4})" if len(syms) > 4 else ""
                print(f"  {n} -> {m}: {' '.join(syms[:4])}{more}")
    if cycles:
        return 1
    print(f"depgraph: {len(defs)} files, no cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
