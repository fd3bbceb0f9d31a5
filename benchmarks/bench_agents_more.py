"""Every agent read through the agent seam, on its fixture scaled to ~100 MB, against the real ccusage.

Run from the repository root (Node and npm needed; without them the benchmark says so and stops):

    python benchmarks/bench_agents_more.py                    # every agent with a fixture home
    python benchmarks/bench_agents_more.py --agents gemini kilo --mb 20

Each agent's fixture home (``tests/data/agents/<agent>/home/``) is copied into ``--root`` and
scaled until its session data reach ``--mb`` MB: a session file is copied beside itself under a
new name (``<name>-<k>.<ext>``), a session folder named by its id (Kimi's, Grok's) is copied as
``<id>-<k>``, and a SQLite store (OpenCode's, Kilo's, Hermes') doubles its rows per round, every id
column suffixed (``-<k>``), so that both tools see many sessions of the fixture's shapes. Then,
in one run, ``--rounds`` interleaved rounds (3) of fresh processes, fastest kept: ``ccusage <agent> daily
--json --offline`` and ``sessionlab usage daily --agent <agent> --json`` (no cache), both with
``HOME`` set to the scaled home (with no cache to fill, the report reads the spend rows alone: see
``docs/cache.md``). The speed columns are sessionlab's relative to ccusage's
(ccusage's seconds / sessionlab's; the target is >= 0.5). The last two columns are sessionlab again
with its cache warm (``SESSIONLAB_CACHE_DIR`` filled by one run first): what a second report on
the same sessions costs (a session in a database is read every time, cache or not).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXED_NAMES = {"wire.jsonl", "updates.jsonl", "summary.json", "state.json", "context.jsonl"}
SKIP = {".db-wal", ".db-shm"}


def _data_bytes(home: Path) -> int:
    return sum(p.stat().st_size for p in home.rglob("*") if p.is_file())


def _copy_name(p: Path, k: int) -> Path:
    stem, dot, rest = p.name.partition(".")
    return p.with_name(f"{stem}-{k}{dot}{rest}")


def _copy_value(c: str, int_pk: bool, is_id: bool, k: int) -> str:
    """A column's value in a row's copy: a new rowid, a text id suffixed ``-k``, else the same."""
    if int_pk:
        return "NULL"
    if is_id:
        return f'CASE WHEN typeof("{c}") = \'text\' THEN "{c}" || \'-{k}\' ELSE "{c}" END'
    return f'"{c}"'


def _scale_sqlite(db: Path, k: int) -> None:
    """Copies of every row with its id columns (``id``, ``*_id``, ``*ID``) suffixed ``-k``."""
    con = sqlite3.connect(db)
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table' "
                                            "AND name NOT LIKE 'sqlite_%'")]
        for t in tables:
            info = list(con.execute(f'PRAGMA table_info("{t}")'))
            cols = [r[1] for r in info]
            ids = {c for c in cols if c == "id" or c.endswith("_id") or c.endswith("ID")}
            int_pk = {r[1] for r in info if r[5] and "INT" in (r[2] or "").upper()}  # (a new rowid for each copy)
            if not ids:
                continue

            sel = ", ".join(_copy_value(c, c in int_pk, c in ids, k) for c in cols)
            names = ", ".join(f'"{c}"' for c in cols)
            con.execute(f'INSERT OR IGNORE INTO "{t}" ({names}) SELECT {sel} FROM "{t}"')  # (doubles the rows)
        con.commit()
    finally:
        con.close()


def scale(src: Path, dst: Path, mb: int) -> Path:
    """``src`` (a fixture home) copied to ``dst`` and grown to about ``mb`` MB of session data."""
    if (dst / ".complete").exists():
        return dst
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    files = [p for p in dst.rglob("*") if p.is_file() and p.suffix not in SKIP]
    dbs = [p for p in files if p.suffix == ".db"]
    plain = [p for p in files if p.suffix != ".db" and not p.name.startswith(".") and p.suffix in (".json", ".jsonl")
             or ".jsonl." in p.name]
    dirs = sorted({p.parent for p in plain if p.name in FIXED_NAMES})
    singles = [p for p in plain if p.name not in FIXED_NAMES and p.parent not in dirs]  # (a folder's files go with it)
    fixed = _data_bytes(dst) - sum(p.stat().st_size for p in dbs)  # (counted once: rglob per round is quadratic)
    per_round = sum(_data_bytes(d) for d in dirs) + sum(p.stat().st_size for p in singles)
    k = 0
    while fixed + sum(p.stat().st_size for p in dbs) < mb << 20:
        k += 1
        for d in dirs:
            shutil.copytree(d, d.with_name(f"{d.name}-{k}"))
        for p in singles:
            shutil.copyfile(p, _copy_name(p, k))
        fixed += per_round
        for db in dbs:
            _scale_sqlite(db, k)
        if not (dirs or singles or dbs):
            break
    (dst / ".complete").write_text("")
    return dst


def measure(cmd: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    fixtures = sorted(p.name for p in (ROOT / "tests" / "data" / "agents").iterdir() if (p / "home").is_dir())
    ap.add_argument("--agents", nargs="+", default=fixtures, choices=fixtures)
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds, the fastest kept")
    ap.add_argument("--root", default="/tmp/sessionlab-bench-agents-more")
    ap.add_argument("--ccusage-version", default="20.0.24")
    a = ap.parse_args()
    if shutil.which("npm") is None:
        print("skipped: Node and npm are needed to install ccusage")
        return
    work = Path(tempfile.mkdtemp(prefix="bench-agents-more-"))
    try:
        subprocess.run(["npm", "install", "--prefix", str(work), "--silent", "--no-audit", "--no-fund",
                        f"ccusage@{a.ccusage_version}"], check=True, capture_output=True)
        ccusage = str(work / "node_modules" / ".bin" / "ccusage")
        print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, ccusage {a.ccusage_version}")
        print("| agent | scaled to | ccusage s | sessionlab s | speed vs ccusage | cache warm s | speed vs ccusage |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for agent in a.agents:
            home = scale(ROOT / "tests" / "data" / "agents" / agent / "home", Path(a.root) / agent, a.mb)
            env = {"PATH": os.environ["PATH"], "HOME": str(home), "SESSIONLAB_CACHE_DIR": "",
                   "PYTHONPATH": str(ROOT)}
            cmds = {"ccusage": [ccusage, agent, "daily", "--json", "--offline", "--timezone", "UTC"],
                    "sessionlab": [sys.executable, "-m", "sessionlab", "usage", "daily", "--agent", agent, "--json"]}
            warm_env = {**env, "SESSIONLAB_CACHE_DIR": str(work / "cache" / agent)}
            measure(cmds["sessionlab"], warm_env)  # (fills the cache)
            best: dict[str, float] = {}
            for _ in range(a.rounds):
                for name, cmd in cmds.items():
                    best[name] = min(best.get(name, float("inf")), measure(cmd, env))
                best["warm"] = min(best.get("warm", float("inf")), measure(cmds["sessionlab"], warm_env))
            cc = best["ccusage"]
            print(f"| {agent} | {_data_bytes(home) / 1e6:.0f} MB | {cc:.2f} | {best['sessionlab']:.2f} | "
                  f"{cc / best['sessionlab']:.2f}x | {best['warm']:.2f} | {cc / best['warm']:.2f}x |", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
