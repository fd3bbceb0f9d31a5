"""The CLI from a fresh process against the real ccusage on the same Claude Code, Codex and pi folders.

Run from the repository root (Node and npm needed; without them the benchmark says so and stops):

    python benchmarks/bench_ccusage.py                      # 100 MB, 250 MB and 1 GB of each agent
    python benchmarks/bench_ccusage.py --sizes 100 --agents codex pi

The corpora come from ``sessionlab.synth`` (seeded; Claude Code transcripts with their subagent
files, Codex rollouts with forks, pi sessions with branches and compactions), laid out as each
agent keeps them (``<dir>/projects/...`` for ``CLAUDE_CONFIG_DIR``, ``<dir>/sessions/...`` for
``CODEX_HOME``, session folders for ``ccusage pi --pi-path``) and generated once into ``--root``.
ccusage (``--ccusage-version``, default 20.0.24, the newest with a linux-x64 binary) is installed
from the npm registry into a temporary folder. For each agent and size, in one run, three
rounds interleave the commands, each a fresh process, and the fastest round is kept:

- ``ccusage <agent> daily --json --offline``;
- ``sessionlab usage daily DIR --json`` cold: no cache (``SESSIONLAB_CACHE_DIR`` empty);
- the same warm: with a cache folder the first round filled (every file unchanged);
- ``sessionlab summary DIR --json``, cold and warm, beside them (ccusage has no such report: its
  ratio is to ccusage's daily report, the nearest thing a user would run).

Wall seconds and peak memory (the process's maximum resident set, from ``wait4``) are measured
from outside. The ratio columns are sessionlab's over ccusage's (below 1: sessionlab is faster or
smaller). Both tools' token totals are compared on every run and the last column says whether they
agree (pi: where they differ, docs/ccusage-differences.md says why).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def generate(kind: str, folder: Path, mb: int) -> Path:
    """A corpus of about ``mb`` MB under ``folder`` (kept: generated once)."""
    done = folder / ".complete"
    if done.exists():
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    sys.path.insert(0, str(ROOT))
    from sessionlab.synth import generate_claude_session, generate_codex_session

    start = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    size, seed, parent = 0, 0, None
    while size < mb << 20:
        if kind == "pi":
            from sessionlab.synth import generate_session

            p = generate_session(folder, seed=seed, turns=20)
            size += p.stat().st_size
        elif kind == "claude":
            p = generate_claude_session(folder, seed=seed, turns=20, compact_at=150_000,
                                        start=start + timedelta(minutes=97 * seed))
            size += sum(f.stat().st_size for f in [p, *p.with_suffix("").rglob("*.jsonl")])
        else:
            fork = parent if seed % 10 == 9 else None
            p = generate_codex_session(folder / "sessions", seed=seed, turns=20, compact_at=150_000, fork_of=fork,
                                       start=start + timedelta(minutes=83 * seed))
            parent = p
            size += p.stat().st_size
        seed += 1
    done.write_text("")
    return folder


def install_ccusage(version: str, where: Path) -> Path | None:
    if shutil.which("npm") is None or shutil.which("node") is None:
        return None
    subprocess.run(["npm", "install", "--prefix", str(where), "--silent", "--no-audit", "--no-fund",
                    f"ccusage@{version}"], check=True, capture_output=True)
    return where / "node_modules" / ".bin" / "ccusage"


def measure(cmd: list[str], env: dict[str, str]) -> tuple[float, float, bytes]:
    """(wall seconds, peak RSS in MB, stdout) of one fresh process."""
    out = tempfile.TemporaryFile()
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited with {proc.returncode}")
    out.seek(0)
    return wall, usage.ru_maxrss / 1024, out.read()


def tokens(report: bytes) -> tuple[int, ...]:
    t = json.loads(report)["totals"]
    return tuple(t[k] for k in ("inputTokens", "outputTokens", "cacheCreationTokens", "cacheReadTokens"))


def run(kind: str, folder: Path, ccusage: Path, cache: Path) -> dict[str, tuple[float, float]]:
    base = {"PATH": os.environ["PATH"], "HOME": str(cache.parent / "home")}
    (cache.parent / "home").mkdir(exist_ok=True)
    agent_env = {"claude": {"CLAUDE_CONFIG_DIR": str(folder)}, "codex": {"CODEX_HOME": str(folder)},
                 "pi": {}}[kind]
    extra = ["--pi-path", str(folder)] if kind == "pi" else []
    usage = [sys.executable, "-m", "sessionlab", "usage", "daily", str(folder), "--json"]
    summary = [sys.executable, "-m", "sessionlab", "summary", str(folder), "--json"]
    cold = {**base, "SESSIONLAB_CACHE_DIR": "", "PYTHONPATH": str(ROOT)}
    warm = {**base, "SESSIONLAB_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    commands = {
        "ccusage": ([str(ccusage), kind, "daily", "--json", "--offline", *extra], {**base, **agent_env}),
        "sessionlab cold": (usage, cold), "sessionlab warm": (usage, warm),
        "summary cold": (summary, cold), "summary warm": (summary, warm),
    }
    shutil.rmtree(cache, ignore_errors=True)
    measure(*commands["sessionlab warm"])  # fills the cache
    best: dict[str, tuple[float, float]] = {}
    answers: dict[str, set] = {"ccusage": set(), "sessionlab": set()}
    for _ in range(3):
        for name, (cmd, env) in commands.items():
            wall, rss, out = measure(cmd, env)
            if not name.startswith("summary"):
                answers["ccusage" if name == "ccusage" else "sessionlab"].add(tokens(out))
            if name not in best or wall < best[name][0]:
                best[name] = (wall, max(rss, best.get(name, (0, 0))[1]))
    if len(answers["sessionlab"]) != 1:
        raise SystemExit(f"{kind}: sessionlab's cold and warm token totals differ: {answers['sessionlab']}")
    return best, answers["ccusage"] == answers["sessionlab"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 250, 1000], help="corpus sizes in MB")
    ap.add_argument("--agents", nargs="+", default=["claude", "codex", "pi"], choices=["claude", "codex", "pi"])
    ap.add_argument("--root", default="/tmp/sessionlab-bench-ccusage", help="where the corpora are kept")
    ap.add_argument("--ccusage-version", default="20.0.24")
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-ccusage-"))
    try:
        ccusage = install_ccusage(a.ccusage_version, work / "npm")
        if ccusage is None:
            print("skipped: Node and npm are needed to install ccusage")
            return
        cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                    if ln.startswith("model name")), platform.machine()) if Path("/proc/cpuinfo").exists() else ""
        print(f"Python {platform.python_version()}, {os.cpu_count()} CPUs ({cpu}), ccusage {a.ccusage_version}")
        print("| agent | corpus | files | ccusage daily s | MB | usage cold s | x | MB | x | usage warm s | x | MB | x "
              "| summary cold s | x | summary warm s | x | same tokens |")
        print("|" + "---|" * 18)
        for kind in a.agents:
            for mb in a.sizes:
                folder = generate(kind, Path(a.root) / f"{kind}-{mb}", mb)
                files = [p for p in folder.rglob("*.jsonl")]
                size = sum(p.stat().st_size for p in files) / 1e6
                b, same = run(kind, folder, ccusage, work / "cache")
                cw, cm = b["ccusage"]
                cells = [f"{kind}", f"{size:.0f} MB", f"{len(files)}", f"{cw:.2f}", f"{cm:.0f}"]
                for name in ("sessionlab cold", "sessionlab warm"):
                    w, m = b[name]
                    cells += [f"{w:.2f}", f"{w / cw:.2f}", f"{m:.0f}", f"{m / cm:.2f}"]
                for name in ("summary cold", "summary warm"):
                    w, _ = b[name]
                    cells += [f"{w:.2f}", f"{w / cw:.2f}"]
                cells.append("yes" if same else "no (docs/ccusage-differences.md)")
                print("| " + " | ".join(cells) + " |", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
