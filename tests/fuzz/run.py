"""Long fuzz runs: ``python -m tests.fuzz.run --seconds 1200 [--target cache]`` (see tests/fuzz/README.md)."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

from tests.fuzz.harness import asan_runtime, build, compiler, run, run_cache


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Fuzz sessionlab's C scanner under ASan + UBSan, or its cache.")
    ap.add_argument("--target", choices=("scanner", "cache"), default="scanner",
                    help="the C scanner (default) or the loaders' cache (damaged segments and manifests)")
    ap.add_argument("--seconds", type=float, default=1200, help="how long to fuzz (default 1200)")
    ap.add_argument("--seed", type=int, default=1, help="first seed of the mutations (default 1)")
    ap.add_argument("--out", type=Path, default=None, help="where crashing/mismatching inputs are kept")
    ap.add_argument("--hang-seconds", type=float, default=60, help="no progress for this long is a hang")
    args = ap.parse_args(argv)
    if args.target == "cache":
        out = args.out or Path(tempfile.mkdtemp(prefix="sessionlab-cachefuzz-"))
        report = run_cache(seconds=args.seconds, seed=args.seed, out_dir=out, hang_seconds=args.hang_seconds)
        print(json.dumps({**asdict(report), "out": str(out)}, indent=2))
        return 1 if report.failures else 0
    cc = compiler()
    if cc is None or asan_runtime(cc) is None:
        print("no C compiler with AddressSanitizer found", file=sys.stderr)
        return 2
    out = args.out or Path(tempfile.mkdtemp(prefix="sessionlab-fuzz-"))
    module = build(out / "build", cc)
    report = run(module, seconds=args.seconds, seed=args.seed, out_dir=out, hang_seconds=args.hang_seconds)
    print(json.dumps({**asdict(report), "out": str(out)}, indent=2))
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
