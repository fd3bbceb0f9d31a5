"""sessionlab vs pi's own code: open a corpus and build every call's context with its estimate.

Run from the repository root (needs node and npm; without them it says so and exits 0; never in CI):

    python benchmarks/bench_vs_pi.py                          # pi 1.6.0 on /tmp/sessionlab-bench-1.6
    python benchmarks/bench_vs_pi.py --pi-version 0.73.1 --package @mariozechner/pi-coding-agent
    python benchmarks/bench_vs_pi.py --corpus DIR --pi-dir DIR  # reuse an installed package

The published package is installed from the npm registry into a temporary folder
(``npm install --prefix``, ``--ignore-scripts``). A scratch copy of the corpus is made (pi may
rewrite a file it opens: migration, a missing final newline) and both tools read that copy.

pi (``benchmarks/bench_vs_pi.mjs``, Node, best of ``--repeat``): ``SessionManager.open`` of every
file; then for every assistant call ``buildSessionContext`` at its parent, ``estimateContextTokens``
of the messages and, in pi 1.x, ``estimateProjectedContextTokens`` of the branch's projection.
sessionlab, in this process (best of ``--repeat``): ``entries_table`` of the files (cold: no cache),
then ``contexts(at="calls")`` on a freshly loaded table each time; and once in a fresh process
(``import sessionlab`` + load + contexts, wall time). Both results are compared call by call
(message count, context estimate, projected estimate) before anything is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ["SESSIONLAB_CACHE_DIR"] = ""  # every load here is a cold one

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_contexts import machine  # noqa: E402

FRESH = """
import os, sys, time
os.environ["SESSIONLAB_CACHE_DIR"] = ""
t0 = time.perf_counter()
import sessionlab
t = sessionlab.entries_table(sys.argv[1:], on_bad_lines="skip", rules=RULES)
sessionlab.contexts(t, at="calls")
print(time.perf_counter() - t0)
"""


def install(package: str, version: str, prefix: Path) -> Path:
    print(f"installing {package}@{version} into {prefix}", file=sys.stderr)
    subprocess.run(["npm", "install", "--prefix", str(prefix), "--ignore-scripts", "--no-audit", "--no-fund",
                    "--loglevel=error", f"{package}@{version}"], check=True, stdout=sys.stderr)
    return prefix / "node_modules" / package


def run_pi(pkg: Path, corpus: Path, work: Path, repeat: int) -> tuple[dict, dict]:
    out = work / "pi-calls.json"
    res = subprocess.run(["node", str(HERE / "bench_vs_pi.mjs"), "--pi", str(pkg), "--corpus", str(corpus),
                          "--out", str(out), "--repeat", str(repeat)], check=True, capture_output=True, text=True)
    return json.loads(res.stdout.strip().splitlines()[-1]), json.loads(out.read_text())


def run_sessionlab(files: list[str], rules: str, repeat: int) -> tuple[float, float, dict]:
    import sessionlab
    load_s = ctx_s = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        table = sessionlab.entries_table(files, on_bad_lines="skip", rules=rules)
        t1 = time.perf_counter()
        ctx = sessionlab.contexts(table, at="calls")
        t2 = time.perf_counter()
        load_s, ctx_s = min(load_s, t1 - t0), min(ctx_s, t2 - t1)
    got = {f"{os.path.basename(f)}\t{a}": [m, c, p] for f, a, m, c, p in zip(
        *(ctx[k].to_pylist() for k in ("file", "at_id", "message_count", "context_tokens", "projected_tokens")))}
    return load_s, ctx_s, got


def compare(pi_calls: dict, got: dict, projected: bool) -> list[str]:
    bad = []
    if pi_calls.keys() != got.keys():
        bad.append(f"call sets differ: {len(pi_calls.keys() - got.keys())} only in pi, "
                   f"{len(got.keys() - pi_calls.keys())} only in sessionlab")
    for k in pi_calls.keys() & got.keys():
        want, have = pi_calls[k], got[k] if projected else got[k][:2] + [None]
        if want != have:
            bad.append(f"{k}: pi {want}, sessionlab {have}")
    return bad


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", default="/tmp/sessionlab-bench-1.6")
    ap.add_argument("--package", default="@earendil-works/pi-coding-agent")
    ap.add_argument("--pi-version", default="1.6.0")
    ap.add_argument("--pi-dir", help="an installed package folder (skips npm install)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if not (shutil.which("node") and (args.pi_dir or shutil.which("npm"))):
        print("skipped: needs node and npm (only to run pi's own code; sessionlab never needs them)")
        return 0
    corpus = Path(args.corpus)
    if not corpus.exists():
        from sessionlab.synth import generate_corpus
        generate_corpus(corpus, n_sessions=300, target_bytes=150_000_000, seed=0)
    rules = "pi-0.58" if args.pi_version.startswith("0.") else "pi-1.6"
    with tempfile.TemporaryDirectory(prefix="bench-vs-pi-") as tmp:
        work = Path(tmp)
        pkg = Path(args.pi_dir) if args.pi_dir else install(args.package, args.pi_version, work / "npm")
        copy = work / "corpus"
        shutil.copytree(corpus, copy)
        pi, pi_calls = run_pi(pkg, copy, work, args.repeat)
        files = sorted(str(p) for p in copy.rglob("*.jsonl"))
        load_s, ctx_s, got = run_sessionlab(files, rules, args.repeat)
        fresh = subprocess.run([sys.executable, "-c", FRESH.replace("RULES", repr(rules)), *files],
                               check=True, capture_output=True, text=True, env={**os.environ})
        fresh_s = float(fresh.stdout.strip().splitlines()[-1])
        bad = compare(pi_calls, got, projected=not args.pi_version.startswith("0."))
        mb = sum(os.path.getsize(f) for f in files) / 1e6
    print(f"corpus: {len(files)} files, {mb:.1f} MB, {pi['calls']} calls ({corpus})")
    print(f"machine: {machine()}, node {pi['node']}")
    print(f"pi: {args.package}@{pi['version']}; sessionlab rules={rules!r}\n")
    print("| step | pi (Node) | sessionlab | speed-up |\n|---|---:|---:|---:|")
    print(f"| open / load every file | {pi['open_s']:.2f} s | {load_s:.3f} s | {pi['open_s'] / load_s:.1f}x |")
    print(f"| every call's context + estimate | {pi['calls_s']:.2f} s | {ctx_s:.3f} s | "
          f"{pi['calls_s'] / ctx_s:.0f}x |")
    print(f"| both | {pi['open_s'] + pi['calls_s']:.2f} s | {load_s + ctx_s:.3f} s | "
          f"{(pi['open_s'] + pi['calls_s']) / (load_s + ctx_s):.1f}x |")
    print(f"| fresh process: import + load + contexts | | {fresh_s:.3f} s | "
          f"{(pi['open_s'] + pi['calls_s']) / fresh_s:.1f}x |")
    if bad:
        print(f"\nresults DIFFER for {len(bad)} calls, e.g.:\n  " + "\n  ".join(sorted(bad)[:10]))
        return 1
    print(f"\nresults: identical for all {len(got)} calls (message count, context estimate"
          + (", projected estimate)" if rules == "pi-1.6" else ")"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
