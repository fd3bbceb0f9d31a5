"""Tree layout of a ~20,000-entry session: sessionlab.plotting.tree_layout against networkx's layouts.

One command, from the repository root:

    python benchmarks/bench_tree_layout.py              # generates the session with sessionlab.synth
    python benchmarks/bench_tree_layout.py --turns 2150 --timeout 60

Times (best of ``--repeat`` runs for the fast ones): ``tree_layout``; the full ``plot_tree`` drawn
to an Agg canvas; building the networkx graph (``session_tree``); and, each in a fresh subprocess
stopped after ``--timeout`` seconds, networkx's ``spring_layout``, ``bfs_layout`` (layers by
depth) and ``multipartite_layout`` (subsets by depth), the tree-like layouts networkx has without
pydot/graphviz. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# every load here is a cold one: the loaders' cache (on by default) would serve repeated runs
os.environ["SESSIONLAB_CACHE_DIR"] = ""

NX_CODE = r"""
import sys, time
import networkx as nx
from sessionlab import entries_table, session_tree, depths
g = session_tree(entries_table(sys.argv[1]))
which = sys.argv[2]
t0 = time.perf_counter()
if which == "spring_layout":
    nx.spring_layout(g, seed=1)
elif which == "bfs_layout":
    root = next(n for n in g.nodes if g.in_degree(n) == 0)
    nx.bfs_layout(g.to_undirected(as_view=True), root)
elif which == "multipartite_layout":
    nx.set_node_attributes(g, depths(g), "depth")
    nx.multipartite_layout(g, subset_key="depth", align="horizontal")
print(time.perf_counter() - t0)
"""


def _machine() -> str:
    model = "?"
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        model = next(ln.split(":", 1)[1].strip() for ln in out.splitlines() if ln.startswith("Model name"))
    except (OSError, subprocess.CalledProcessError, StopIteration):
        pass
    mem = "?"
    try:
        kb = next(int(ln.split()[1]) for ln in Path("/proc/meminfo").read_text().splitlines()
                  if ln.startswith("MemTotal"))
        mem = f"{kb / 1024 ** 2:.0f} GiB"
    except (OSError, StopIteration):
        pass
    return f"{os.cpu_count()} CPUs (nproc), {model} (lscpu model name), {mem} RAM, Python {platform.python_version()}"


def _best(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _networkx(path: Path, which: str, timeout: float) -> str:
    try:
        out = subprocess.run([sys.executable, "-c", NX_CODE, str(path), which], capture_output=True, text=True,
                             timeout=timeout, check=True)
    except subprocess.TimeoutExpired:
        return f"> {timeout:g} (stopped)"
    except subprocess.CalledProcessError as e:
        return f"failed: {e.stderr.strip().splitlines()[-1] if e.stderr.strip() else e.returncode}"
    return f"{float(out.stdout.strip()):.3f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--turns", type=int, default=2150)
    ap.add_argument("--branch-prob", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=60.0)
    args = ap.parse_args()

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sessionlab import entries_table, generate_session, session_tree
    from sessionlab.plotting import plot_tree, tree_layout, tree_layout_df

    tmp = Path(tempfile.mkdtemp(prefix="sessionlab-tree-"))
    path = generate_session(tmp, seed=args.seed, turns=args.turns, branch_prob=args.branch_prob)
    table = entries_table(path)
    sid = table["session_id"][0].as_py()
    lay = tree_layout_df(table, session_id=sid)
    leaves = len(set(lay["entry_id"]) - set(lay["parent_id"].dropna()))
    print(f"session: {len(lay):,} entries, {leaves} leaves, depth {int(lay['y'].max()):,} "
          f"(generate_session seed={args.seed}, turns={args.turns}, branch_prob={args.branch_prob})")
    print(f"machine: {_machine()}")
    print()

    def draw() -> None:
        ax = plot_tree(table, session_id=sid)
        ax.figure.canvas.draw()
        plt.close(ax.figure)

    rows = [
        ("sessionlab tree_layout", f"{_best(lambda: tree_layout(table, session_id=sid), args.repeat):.3f}"),
        ("sessionlab plot_tree (layout + Agg draw)", f"{_best(draw, max(1, args.repeat // 2)):.3f}"),
        ("networkx graph (session_tree), for reference",
         f"{_best(lambda: session_tree(table, session_id=sid), 1):.3f}"),
    ]
    for which in ("bfs_layout", "multipartite_layout", "spring_layout"):
        rows.append((f"networkx {which}", _networkx(path, which, args.timeout)))
    print("| method | seconds |")
    print("|---|---:|")
    for name, secs in rows:
        print(f"| {name} | {secs} |")


if __name__ == "__main__":
    main()
