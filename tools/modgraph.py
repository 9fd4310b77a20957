#!/usr/bin/env python3
"""The module graph of src/: which module's code names which other module, and the cycles in it.

    python3 tools/modgraph.py [--edges]

A module is a file (src/a/b.rs or src/a/b/mod.rs is `a::b`). An edge a -> b is a path in a's code
(outside its `#[cfg(test)]` modules) that resolves to module b or an item of b: `crate::x::y`,
`super::x`, `self::x`. Edges to a module's own ancestors (a child using what its parent
declares, the usual way of Rust modules) are not counted, nor edges into a module's own
descendants. Prints each strongly connected component of more than one module (a cycle); exits
1 where there is one.
"""
import os, re, sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")

def modules():
    mods = {}
    for dirpath, _, files in os.walk(ROOT):
        for f in files:
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, f), ROOT)[:-3].split(os.sep)
            if rel[-1] == "mod":
                rel = rel[:-1]
            if rel in (["lib"], ["main"]):
                rel = []
            mods[tuple(rel)] = os.path.join(dirpath, f)
    return mods

def strip_tests(text):
    # Drop `#[cfg(test)] mod name { ... }` blocks (brace-matched) and comments.
    text = re.sub(r"//[^\n]*", "", text)
    out, i = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{", text):
        if m.start() < i:
            continue
        out.append(text[i:m.start()])
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        i = j
    out.append(text[i:])
    return "".join(out)

def paths(text):
    # `use` trees expanded one level (a::{b, c::d}) and plain paths.
    found = []
    for m in re.finditer(r"\b(crate|super|self)((?:::\w+)+)(::\{([^;]*?)\})?", text):
        base = [m.group(1)] + m.group(2).strip(":").split("::")
        if m.group(4):
            for part in re.split(r",", m.group(4)):
                part = re.sub(r"\{.*", "", part).strip()
                if part:
                    found.append(base + part.split("::"))
        else:
            found.append(base)
    return found

def resolve(mod, p, mods):
    if p[0] == "crate":
        cur, rest = (), p[1:]
    else:
        cur = mod
        rest = p
        while rest and rest[0] in ("super", "self"):
            if rest[0] == "super":
                cur = cur[:-1]
            rest = rest[1:]
    best = None
    for k in range(len(rest) + 1):
        cand = cur + tuple(rest[:k])
        if cand in mods:
            best = cand
    return best

def main():
    mods = modules()
    edges = {m: set() for m in mods}
    for m, path in mods.items():
        text = strip_tests(open(path).read())
        for p in paths(text):
            t = resolve(m, p, mods)
            if t is None or t == m:
                continue
            if m[: len(t)] == t or t[: len(m)] == m:  # ancestor or descendant
                continue
            edges[m].add(t)
    if "--edges" in sys.argv:
        for m in sorted(edges):
            for t in sorted(edges[m]):
                print("::".join(m) or "crate", "->", "::".join(t) or "crate")
    # Tarjan's strongly connected components.
    index, low, stack, on, comps, n = {}, {}, [], set(), [], [0]
    def visit(v):
        index[v] = low[v] = n[0]; n[0] += 1
        stack.append(v); on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w); low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v:
                    break
            comps.append(comp)
    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    cycles = [c for c in comps if len(c) > 1]
    for c in cycles:
        print("cycle:", ", ".join(sorted("::".join(m) for m in c)))
    print(f"{len(mods)} modules, {sum(len(e) for e in edges.values())} edges, {len(cycles)} cycles")
    return 1 if cycles else 0

sys.exit(main())
