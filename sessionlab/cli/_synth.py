"""``python -m sessionlab.synth``: write generated sessions of pi, Claude Code or Codex.

The files come from :mod:`sessionlab.synth` (seeded, deterministic: the same arguments write the
same bytes), laid out as each agent lays them out, so ``sessionlab summary OUT`` and ``load(OUT)``
read them like real ones::

    python -m sessionlab.synth pi out/ --seed 3 --turns 20
    python -m sessionlab.synth claude out/ --seed 1
    python -m sessionlab.synth codex out/ --seed 1 --turns 4
    python -m sessionlab.synth corpus out/ --sessions 50 --size-mb 20
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

__all__ = ["main"]


def _date(value: str) -> datetime:
    try:
        return datetime.fromisoformat(value).replace(tzinfo=UTC)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a date (YYYY-MM-DD or YYYY-MM-DDTHH:MM)") from None


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m sessionlab.synth",
                                 description="Write generated (seeded, deterministic) session files of pi, "
                                             "Claude Code or Codex, laid out as each agent does.")
    sub = ap.add_subparsers(dest="agent", required=True, metavar="{pi,claude,codex,corpus}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("out", metavar="OUT", help="the folder to write into (created if needed)")
    common.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    pi = sub.add_parser("pi", parents=[common], help="one pi v3 session in OUT/--<cwd>--/")
    pi.add_argument("--turns", type=int, default=40, help="user turns (default: 40)")
    pi.add_argument("--cwd", default="/home/user/proj", help="working directory in the header")
    pi.add_argument("--start", type=_date, help="header time, UTC (default: drawn from the seed)")
    pi.add_argument("--compaction-window", type=int, default=200_000, help="context window (default: 200000)")
    pi.add_argument("--max-bytes", type=int, help="stop at the turn end nearest this file size")
    pi.add_argument("--pi", choices=("1.6", "0.58"), default="1.6", help="which pi release writes it")
    cc = sub.add_parser("claude", parents=[common], help="one Claude Code transcript in OUT/projects/")
    cc.add_argument("--turns", type=int, default=8, help="user turns (default: 8)")
    cc.add_argument("--cwd", help="working directory (default: drawn from the seed)")
    cc.add_argument("--start", type=_date, help="first time, UTC (default: drawn from the seed)")
    cc.add_argument("--no-subagent", dest="subagent", action="store_false", help="no subagent file")
    cx = sub.add_parser("codex", parents=[common], help="one Codex rollout in OUT/sessions/YYYY/MM/DD/")
    cx.add_argument("--turns", type=int, default=6, help="turns (default: 6)")
    cx.add_argument("--start", type=_date, help="first time, UTC (default: drawn from the seed)")
    co = sub.add_parser("corpus", parents=[common], help="many pi sessions of spread sizes in OUT/--<cwd>--/")
    co.add_argument("--sessions", type=int, default=300, help="number of sessions (default: 300)")
    co.add_argument("--size-mb", type=float, default=150.0, help="about how many MB in all (default: 150)")
    co.add_argument("--pi", choices=("1.6", "0.58"), default="1.6", help="which pi release writes them")
    return ap


def _write(args: argparse.Namespace) -> list[Path]:
    from .. import synth

    out = Path(args.out)
    if args.agent == "pi":
        return [synth.generate_session(out / synth.encode_cwd(args.cwd), seed=args.seed, turns=args.turns,
                                       cwd=args.cwd, start=args.start, compaction_window=args.compaction_window,
                                       max_bytes=args.max_bytes, pi=args.pi)]
    if args.agent == "claude":
        return [synth.generate_claude_session(out, seed=args.seed, turns=args.turns, start=args.start,
                                              subagent=args.subagent, cwd=args.cwd)]
    if args.agent == "codex":
        return [synth.generate_codex_session(out, seed=args.seed, turns=args.turns, start=args.start)]
    return synth.generate_corpus(out, n_sessions=args.sessions, target_bytes=int(args.size_mb * 1e6),
                                 seed=args.seed, pi=args.pi)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the generator's command line; print each written file with its size; returns the exit code."""
    args = _parser().parse_args(argv)
    try:
        paths = _write(args)
    except (OSError, ValueError) as exc:  # an unwritable folder, a value the generator refuses
        print(f"python -m sessionlab.synth: {exc}", file=sys.stderr)
        return 2
    for p in paths:
        print(f"{p.stat().st_size:>12,}  {p}")
    return 0
