"""Scaling benchmark: local load vs Dask on a LocalCluster, for 150 MB, 1.5 GB and 5 GB corpora.

Run from the repository root:

    python benchmarks/bench_scale.py                    # 150 MB, 1.5 GB and 5 GB
    python benchmarks/bench_scale.py --sizes 150MB,1.5GB   # skip the 5 GB corpus (disk/time budget)

Each corpus is generated with ``sessionlab.synth`` (about 0.5 MB per session, two generator
processes) into a temporary folder that is deleted after its row of the table. The same work runs
both ways: load every file and sum usage per model (``usage_by(by="model")``), checked equal.

- local: ``entries_table`` + ``usage_by`` in a fresh subprocess (its peak RSS is the whole table);
- Dask: ``sessionlab.dask.load_dask`` (partitions of ``--partition-mb`` MB of JSONL) +
  ``sessionlab.dask.usage_by`` on a ``LocalCluster`` of 2 worker processes with 1 thread each,
  started fresh for each corpus; peak memory per worker is each worker process's maximum RSS
  (``getrusage``) after the run, the client's own is shown apart (it only holds the result).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from bench_contexts import machine  # (the same machine line in every benchmark)

# every load here is a cold one: the loaders' cache (on by default) would serve repeated runs
os.environ["SESSIONLAB_CACHE_DIR"] = ""

ROOT = Path(__file__).resolve().parent.parent
SIZES = {"150MB": 150_000_000, "1.5GB": 1_500_000_000, "5GB": 5_000_000_000}
_SESSION_BYTES = 500_000


def _shard(args: tuple[str, int, int, int]) -> int:
    from sessionlab.synth import generate_corpus

    out, n, nbytes, seed = args
    generate_corpus(out, n_sessions=n, target_bytes=nbytes, seed=seed)
    return n


def generate(out: Path, nbytes: int, jobs: int = 2) -> None:
    shards = max(jobs, nbytes // 250_000_000)
    n = max(1, nbytes // _SESSION_BYTES // shards)
    tasks = [(str(out / f"shard-{i:03d}"), n, nbytes // shards, i) for i in range(shards)]
    with ProcessPoolExecutor(jobs) as ex:
        list(ex.map(_shard, tasks))


def corpus_bytes(d: Path) -> int:
    return sum(p.stat().st_size for p in d.rglob("*.jsonl"))


_LOCAL = """
import json, resource, sys, time
t0 = time.perf_counter()
from sessionlab import entries_table, usage_by
t1 = time.perf_counter()
t = entries_table(sys.argv[1], on_bad_lines="skip", progress=False)
u = usage_by(t, by="model")
t2 = time.perf_counter()
print(json.dumps({"seconds": t2 - t1, "import": t1 - t0, "rows": t.num_rows,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "calls": u["calls"].to_pylist(), "output": u["output_tokens"].to_pylist()}))
"""


def run_local(corpus: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", _LOCAL, str(corpus)], capture_output=True, text=True, env=env,
                         check=True)
    return json.loads(out.stdout)


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_dask(corpus: Path, partition_mb: int) -> dict:
    from distributed import Client, LocalCluster

    from sessionlab import dask as sd

    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None,
                      host="127.0.0.1", memory_limit=0) as cluster, Client(cluster) as client:
        # imports before timing, on the workers and here, as the local run does
        client.run(lambda: [__import__(m) for m in ("pandas", "dask.dataframe", "sessionlab.dask")])
        __import__("dask.dataframe")
        base = client.run(_peak_mb)
        t0 = time.perf_counter()
        ddf = sd.load_dask(str(corpus), bytes_per_partition=partition_mb * 1_000_000)
        u = sd.usage_by(ddf, by="model")
        seconds = time.perf_counter() - t0
        peaks = client.run(_peak_mb)
    return {"seconds": seconds, "partitions": ddf.npartitions, "worker_peak_mb": sorted(peaks.values()),
            "worker_base_mb": sorted(base.values()), "calls": u["calls"].to_pylist(),
            "output": u["output_tokens"].to_pylist()}




def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="150MB,1.5GB,5GB", help="comma-separated, from " + ", ".join(SIZES))
    ap.add_argument("--partition-mb", type=int, default=128, help="JSONL MB per Dask partition (default 128)")
    ap.add_argument("--tmp", default=None, help="folder for the generated corpora (default: the system temp dir)")
    args = ap.parse_args()
    print(f"machine: {machine()}")
    print(f"Dask: LocalCluster(n_workers=2, processes=True, threads_per_worker=1), partitions of "
          f"~{args.partition_mb} MB JSONL\n")
    rows = []
    for name in args.sizes.split(","):
        tmp = Path(tempfile.mkdtemp(prefix=f"sessionlab-scale-{name}-", dir=args.tmp))
        try:
            t0 = time.perf_counter()
            generate(tmp, SIZES[name])
            gen = time.perf_counter() - t0
            nbytes = corpus_bytes(tmp)
            local = run_local(tmp)
            dask = run_dask(tmp, args.partition_mb)
            assert dask["calls"] == local["calls"] and dask["output"] == local["output"], "results differ"
            row = (f"| {name} | {nbytes / 1e6:,.0f} | {local['rows']:,} | {local['seconds']:.2f} | "
                   f"{local['peak_mb']:,.0f} | {dask['seconds']:.2f} | {dask['partitions']} | "
                   f"{' / '.join(f'{p:,.0f}' for p in dask['worker_peak_mb'])} | "
                   f"{dask['seconds'] / local['seconds']:.2f}x | "
                   f"{max(dask['worker_peak_mb']) / local['peak_mb']:.2f}x |")
            rows.append(row)
            print(f"{name}: generated {nbytes / 1e6:,.0f} MB in {gen:.0f} s; worker base RSS "
                  f"{' / '.join(f'{p:,.0f}' for p in dask['worker_base_mb'])} MB", flush=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    print("\n| corpus | MB | rows | local s | local peak RSS MB | Dask s | partitions | peak RSS per worker MB "
          "| time Dask / local | peak worker / local |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print(row)


if __name__ == "__main__":
    main()
