#!/usr/bin/env python3
"""Import cycles between the files of one module, in every module of a crate.

    python3 scripts/file-cycles.py CRATE/src [--allow FILE]

The module-level check (`../shared/tools/module-cycles.py`) looks at the top-level modules
only. This one looks inside each module: the nodes of module `a::b` are its children (a file
`a/b/x.rs` is node `x`, a folder `a/b/y/` is node `y` with everything below it), and a child
depends on a sibling when any of its files names the sibling through `crate::a::b::…`,
`super::…` or a name that `a/b/mod.rs` re-exports from that sibling. `mod.rs` itself is not a
node: declaring and re-exporting children is not a dependency on them. `#[cfg(test)] mod tests`
blocks at the end of a file and comments are ignored (a test may look at anything).

Prints each cycle as `cycle in MODULE: a -> b -> a`; exits 1 when it finds one that is not in
the allow file (one `MODULE: a -> b -> a` per line, `#` comments), 0 otherwise, and says which
allowed cycles are gone (so the allow file only shrinks).
"""
import os
import re
import sys


def module_path(src, path):
    rel = os.path.relpath(path, src)[:-3].split(os.sep)
    if rel[-1] in ("mod", "lib", "main"):
        rel = rel[:-1]
    return tuple(rel), os.path.basename(path) in ("mod.rs", "lib.rs", "main.rs")


def strip(text):
    # Everything from the first test module on; then comments (line and block) and strings.
    m = re.search(r"#\[cfg\(test\)\]\s*(pub(\(crate\))?\s+)?mod\s+\w+\s*\{", text)
    if m:
        text = text[: m.start()]
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'"(\\.|[^"\\])*"', '""', text)
    return text


def use_paths(text):
    """Every path a `use` statement imports, expanded (`a::{b, c::d}` → a::b, a::c::d)."""
    out = []
    for m in re.finditer(r"\buse\s+([^;]+);", text):
        tree = re.sub(r"\s+as\s+\w+", "", m.group(1))
        out.extend(expand(re.sub(r"\s+", "", tree)))
    return out


def expand(tree):
    # tree: `a::b::{c,d::{e,f}}` or `a::b as c` or `a::*`
    i = tree.find("{")
    if i < 0:
        return [tree]
    prefix, body = tree[:i], tree[i + 1 : tree.rfind("}")]
    parts, depth, cur = [], 0, ""
    for ch in body:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    parts.append(cur)
    out = []
    for p in parts:
        if not p:
            continue
        for e in expand(p):
            out.append((prefix + e) if e != "self" else prefix.rstrip(":"))
    return out


def absolute(path, me, is_root):
    """`path` (from a file of module `me`) as a module path from the crate root, or None."""
    segs = [s for s in path.split("::") if s]
    if not segs:
        return None
    base = list(me)
    if segs[0] == "crate":
        return tuple(segs[1:])
    if segs[0] in ("super", "self"):
        # In `a/b.rs` (module a::b) `super` is `a`; in `a/mod.rs` (module a) it is the root.
        while segs and segs[0] in ("super", "self"):
            if segs[0] == "super":
                if not base:
                    return None
                base.pop()
            segs.pop(0)
        return tuple(base + segs)
    return None


def main():
    args = sys.argv[1:]
    allow_file = None
    if "--allow" in args:
        i = args.index("--allow")
        allow_file = args[i + 1]
        del args[i : i + 2]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    src = args[0]
    files = {}
    for d, _, names in os.walk(src):
        for n in names:
            if n.endswith(".rs"):
                p = os.path.join(d, n)
                files[p] = module_path(src, p)
    modules = {}  # module path -> set of child names
    for p, (mp, _) in files.items():
        for i in range(len(mp)):
            modules.setdefault(mp[:i], set()).add(mp[i])
    # Re-exports of each module root: name -> child it comes from.
    reexports = {}
    for p, (mp, is_root) in files.items():
        if not is_root:
            continue
        text = strip(open(p, encoding="utf-8").read())
        for u in use_paths(text):
            segs = [s for s in u.split("::") if s]
            if segs and segs[0] not in ("crate", "super", "self") and segs[0] in modules.get(mp, ()):
                reexports.setdefault(mp, {})[segs[-1]] = segs[0]
            else:
                a = absolute(u, mp, True)
                if a and a[: len(mp)] == mp and len(a) > len(mp) and a[len(mp)] in modules.get(mp, ()):
                    reexports.setdefault(mp, {})[a[-1]] = a[len(mp)]
    edges = {}  # module -> {child: set(children)}
    for p, (mp, is_root) in files.items():
        text = strip(open(p, encoding="utf-8").read())
        refs = use_paths(text) + re.findall(r"\b(?:crate|super|self)(?:::\w+)+", text)
        me = mp if is_root else mp
        for r in refs:
            a = absolute(r, me if is_root else mp, is_root)
            if a is None:
                continue
            # Common ancestor of the file's module and the target.
            n = 0
            while n < len(mp) and n < len(a) and mp[n] == a[n]:
                n += 1
            level = mp[:n]
            if n >= len(mp):
                continue  # the level's own root (mod.rs) or a path into the file itself
            src_child = mp[n]
            if n >= len(a):
                continue
            tgt = a[n]
            children = modules.get(level, set())
            if tgt not in children:
                tgt = reexports.get(level, {}).get(tgt)
                if tgt is None:
                    continue  # defined in the level's mod.rs
            if tgt != src_child:
                edges.setdefault(level, {}).setdefault(src_child, set()).add(tgt)
    cycles = []
    for level, graph in sorted(edges.items()):
        cycles.extend(("::".join(level) or "crate", c) for c in find_cycles(graph))
    allowed = set()
    if allow_file and os.path.exists(allow_file):
        for line in open(allow_file, encoding="utf-8"):
            line = line.split("#")[0].strip()
            if line:
                allowed.add(line)
    found = set()
    for m, c in cycles:
        ring = [x for x in c if not x.startswith("(")]
        extra = [x for x in c if x.startswith("(")]
        found.add(f"{m}: {' -> '.join(ring + [ring[0]])}" + (" " + extra[0] if extra else ""))
    new = sorted(found - allowed)
    for c in sorted(found):
        print(("allowed " if c in allowed else "") + "cycle in " + c)
    for c in sorted(allowed - found):
        print(f"gone (remove it from {allow_file}): {c}")
    print(f"file cycles: {len(found)} ({len(new)} not allowed)")
    return 1 if new else 0


def find_cycles(graph):
    """One cycle per strongly connected component of more than one node (Tarjan), printed
    from its smallest node along the smallest next nodes: stable, short, and enough to act on."""
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    out = []
    for comp in comps:
        members = set(comp)
        # Shortest path back to the start inside the component (BFS).
        start = comp[0]
        prev, queue, found = {start: None}, [start], None
        while queue and found is None:
            nxt = []
            for v in queue:
                for w in sorted(graph.get(v, ())):
                    if w not in members:
                        continue
                    if w == start:
                        found = v
                        break
                    if w not in prev:
                        prev[w] = v
                        nxt.append(w)
                if found is not None:
                    break
            queue = nxt
        path, v = [], found
        while v is not None:
            path.append(v)
            v = prev[v]
        cycle = list(reversed(path))
        rest = sorted(members - set(cycle))
        out.append(cycle + ([f"(also in the circle: {', '.join(rest)})"] if rest else []))
    return out


if __name__ == "__main__":
    sys.exit(main())
