"""One huge session: a 1 GiB file of about a million entries, loaded and analysed, in one run.

Run from the repository root:

    python benchmarks/bench_huge.py                      # generates /tmp/sessionlab-huge/huge.jsonl once
    python benchmarks/bench_huge.py --bytes 100000000    # a smaller file, for a quick look

The file is one pi v3 session written by ``sessionlab.synth.generate_session`` (seed 0, small tool
results so that 1 GiB holds about a million entries); it is generated on the first run and reused.
Each step runs in a fresh subprocess that imports its modules first, then times the step and
reports its own peak RSS (``ru_maxrss``, which includes the interpreter and the libraries, shown on
the first row):

- ``entries_table`` with the C scanner (the default path), and with it off (the msgspec path);
- ``contexts(at="calls")``: the context of every assistant call;
- ``simulate_compaction`` of the session's current branch under five policies.

Targets: the load's peak RSS under 2x the file's size; every step completes.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_contexts import machine  # noqa: E402


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def step(name: str, path: str) -> dict:
    """One step, in this (fresh) process."""
    from sessionlab.analysis import contexts
    from sessionlab.compaction import (
        FractionPolicy,
        KeepLastTurnsPolicy,
        NeverCompact,
        PiThresholdPolicy,
        simulate_compaction,
    )
    from sessionlab.tables import entries_table

    base = _rss_mb()
    out: dict = {"step": name, "base_rss_mb": base}
    if name == "import":
        return out
    t = time.perf_counter()
    table = entries_table(path, on_bad_lines="raise")
    out["load_s"] = time.perf_counter() - t
    out["rows"] = table.num_rows
    if name == "contexts":
        t = time.perf_counter()
        ctx = contexts(table, at="calls")
        out["seconds"] = time.perf_counter() - t
        out["result_rows"] = ctx.num_rows
    elif name == "compaction":
        policies = [NeverCompact(), PiThresholdPolicy(200_000), PiThresholdPolicy(128_000),
                    FractionPolicy(200_000, 0.8, 20_000), KeepLastTurnsPolicy(100_000, 4)]
        t = time.perf_counter()
        res = simulate_compaction(table, policies)
        out["seconds"] = time.perf_counter() - t
        out["result_rows"] = res.sessions.num_rows
        out["compactions"] = res.sessions.column("compactions").to_pylist()
    else:
        out["seconds"] = out["load_s"]
        out["result_rows"] = table.num_rows
    out["peak_rss_mb"] = _rss_mb()
    return out


def run_step(name: str, path: Path, *, native: bool = True) -> dict:
    env = dict(os.environ)
    if not native:
        env["SESSIONLAB_NATIVE"] = "0"
    r = subprocess.run([sys.executable, __file__, "--step", name, str(path)], env=env, capture_output=True,
                       text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def generate(path: Path, nbytes: int) -> None:
    from sessionlab.synth import generate_session

    path.parent.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    generate_session(path, seed=0, turns=10**8, max_bytes=nbytes, result_scale=0.05, branch_prob=0.01)
    print(f"generated {path} in {time.perf_counter() - t:.0f} s", file=sys.stderr)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", default="/tmp/sessionlab-huge")
    ap.add_argument("--bytes", type=int, default=2**30)
    ap.add_argument("--step", nargs=2, metavar=("NAME", "PATH"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.step:
        print(json.dumps(step(*args.step)))
        return 0
    path = Path(args.dir) / ("huge.jsonl" if args.bytes == 2**30 else f"huge-{args.bytes}.jsonl")
    if not path.exists():
        generate(path, args.bytes)
    size = path.stat().st_size
    print(f"file: {path}, {size / 2**20:,.0f} MiB ({size:,} bytes)")
    print(f"machine: {machine()}")
    rows = [
        ("python + sessionlab imported", run_step("import", path)),
        ("entries_table (C scanner)", run_step("load", path)),
        ("entries_table (msgspec path)", run_step("load", path, native=False)),
        ('contexts(at="calls")', run_step("contexts", path)),
        ("simulate_compaction, 5 policies", run_step("compaction", path)),
    ]
    print()
    print("| step | entries | result rows | step s | peak RSS MiB | RSS / file size |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, r in rows:
        peak = r.get("peak_rss_mb", r["base_rss_mb"])
        print(f"| {label} | {r.get('rows', 0):,} | {r.get('result_rows', 0):,} | {r.get('seconds', 0):.2f} | "
              f"{peak:,.0f} | {peak * 2**20 / size:.2f} |")
    comp = rows[-1][1].get("compactions")
    print(f"\n(contexts and simulate_compaction each include a load first: {rows[3][1]['load_s']:.2f} s and "
          f"{rows[4][1]['load_s']:.2f} s, not in 'step s'; compactions per policy: {comp})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
