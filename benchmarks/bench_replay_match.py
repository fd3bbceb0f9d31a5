"""Does the replay put pi's compactions where pi put them? Match rate over the corpora, every
mismatch classified.

Run from the repository root:

    python benchmarks/bench_replay_match.py                  # both bench corpora, tests/data/pi, data/
    python benchmarks/bench_replay_match.py --corpus DIR ...  # other folders
    python benchmarks/bench_replay_match.py -v                # and every mismatch, one line each

For every session that really compacted (on its current branch), pi's own policy is replayed with
the session's settings (``recorded="replace"``: the session's compactions undone, so the replay
decides where to compact from the uncompacted conversation). Session files do not record pi's
settings: where the sessions' documentation states them they are taken from there (``KNOWN``),
otherwise inferred: pi's defaults (reserve 16384, keep 20000 tokens) and the context window the
first recorded compaction points at, the largest standard window (128k, 200k, 272k, 400k, 1M)
whose threshold (window - reserve) its ``tokensBefore`` exceeds (the generated corpora draw
128k or 200k). A recorded compaction
matches when the replay compacts right after the same call.

Every recorded compaction falls in one class:

- ``matched``: the replay compacts after the same call;
- ``below threshold``: its ``tokensBefore`` is at or below the threshold, so pi's threshold did
  not trigger it: a ``/compact`` by hand (the hand-made scenarios of ``tests/data/pi/generated``),
  an extension, or a rule the file does not show (the ``generated-1.6`` driver's own checks);
- ``overflow``: the call before it failed (stop reason ``error``): pi's overflow recovery, which
  the replay only reproduces when the next call's prompt is known not to fit;
- ``aborted``: the call before it was aborted: pi 1.6 checks its threshold after an aborted run
  on its estimate, while the replay triggers only after a call with usable usage;
- ``window exceeded``: the branch's first, and before it the replay compacted because a prompt
  of the recording would not fit the window (pi's overflow recovery); the generator that wrote
  the session sent it anyway (it has no provider to refuse), so the recording compacts later;
- ``settings unknown``: no standard window has a threshold below its ``tokensBefore``;
- ``drift``: not the branch's first compaction, and the replay compacts elsewhere: after the
  first one the two contexts differ (by the size of the summaries and of what each cut point
  kept, or because one of them did not compact at all), so later thresholds are reached at
  other calls;
- ``shifted``: the first compaction of its branch, by the threshold, but the replay compacts at
  another call: the threshold seen on different numbers (pi checks the context after the turn,
  the last usage plus what came after it; the replay checks the turn's last call's usage).

Replay compactions with no recorded one at the same call are counted apart (``extra``). Only pi
sessions are counted (Claude Code and Codex compact by rules of their own).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path

os.environ["SESSIONLAB_CACHE_DIR"] = ""

ROOT = Path(__file__).resolve().parent.parent
RESERVE, KEEP = 16_384, 20_000
WINDOWS = (128_000, 200_000, 272_000, 400_000, 1_000_000)
# settings the sessions' own documentation states (window, reserve, keep, where from)
KNOWN = {
    "tests/data/pi/generated-1.6/": (48_000, 16_384, 14_400, "generated-1.6/README.md"),
    "tests/data/pi/generated/": (200_000, RESERVE, KEEP, "claude-sonnet-4-5's window (SCENARIOS.md: /compact by hand)"),
    "tests/data/pi/real/": (200_000, RESERVE, KEEP, "claude-opus-4-5's window"),
    "data/pi/": (200_000, RESERVE, KEEP, "claude-opus-4-5's window"),
    "data/sessions/--home-user-api-server--/": (30_000, 7_500, 6_000, "data/make_sessions.py"),
}
DEFAULT = ["/tmp/sessionlab-bench-0.58", "/tmp/sessionlab-bench-1.6", str(ROOT / "tests" / "data" / "pi"),
           str(ROOT / "data")]


def recorded_compactions(table):
    """One row per compaction entry on a session's current branch: session_id, the call it follows
    (at_id), tokens_before, that call's stop reason, its position among the branch's compactions."""
    import numpy as np
    import pandas as pd

    from sessionlab.analysis.contexts import context_arrays
    from sessionlab.analysis.usage import current_branch_mask
    from sessionlab.tables._pi16 import table_rules_for

    prep = context_arrays(table, table_rules_for(table, None))
    f = prep.forest
    on = current_branch_mask(table, f)
    calls = prep.is_call & ~f.cyclic
    near = f.nearest(calls)
    comp = np.nonzero(prep.is_comp & on & ~f.cyclic)[0]
    par = f.parent[comp]
    after = np.where(par >= 0, near[np.maximum(par, 0)], -1)
    ids = table["entry_id"].to_numpy(zero_copy_only=False)
    stop = table["stop_reason"].to_numpy(zero_copy_only=False)
    df = pd.DataFrame({
        "session_id": table["session_id"].to_numpy(zero_copy_only=False)[comp],
        "depth": f.depth[comp],
        "at_id": [ids[a] if a >= 0 else None for a in after],
        "stop_reason": [stop[a] if a >= 0 else None for a in after],
        "tokens_before": table["tokens_before"].to_numpy(zero_copy_only=False)[comp],
        "file": table["file"].to_numpy(zero_copy_only=False)[comp],
    }).sort_values(["session_id", "depth"])
    df["nth"] = df.groupby("session_id").cumcount()
    return df


def window_for(tokens_before) -> int | None:
    fits = [w for w in WINDOWS if tokens_before > w - RESERVE]
    return max(fits) if fits else None


def settings_for(file: str, tokens_before) -> tuple[int, int, int, str] | None:
    """(window, reserve, keep, where from) of a session, or None when they cannot be known."""
    path = Path(file).resolve()
    rel = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.as_posix()
    for part, settings in KNOWN.items():
        if rel.startswith(part):
            return settings
    window = window_for(tokens_before)
    return None if window is None else (window, RESERVE, KEEP, "inferred")


def classify_one(r, k, prev_k, sim: set, overflowed: list, window: int, reserve: int) -> str:
    """The class of a recorded compaction after call ``k`` (the branch's previous one after
    ``prev_k``; see the module doc)."""
    if k in sim:
        return "matched"
    if r.tokens_before <= window - reserve:
        return "below threshold"
    if r.stop_reason == "error":
        return "overflow"
    if r.stop_reason == "aborted":
        return "aborted"
    if r.nth > 0:
        return "drift"
    return "window exceeded" if any(prev_k < s < k for s in overflowed) else "shifted"


def classify(table, verbose: bool = False) -> tuple[Counter, int, list[str]]:
    from sessionlab.compaction import PiThresholdPolicy, fit_prices, simulate_compaction

    if "agent" in table.column_names:
        import pyarrow.compute as pc

        table = table.filter(pc.equal(table["agent"], "pi"))
    rec = recorded_compactions(table)
    counts: Counter = Counter()
    lines: list[str] = []
    if rec.empty:
        return counts, 0, lines
    prices = fit_prices(table)
    extra = 0
    for sid, rows in rec.groupby("session_id", sort=True):
        first = rows.iloc[0]
        settings = settings_for(first["file"], first["tokens_before"])
        if settings is None:
            counts["settings unknown"] += len(rows)
            lines += [f"{sid} {r.at_id}: settings unknown (tokensBefore {r.tokens_before})" for r in rows.itertuples()]
            continue
        window, reserve, keep, source = settings
        res = simulate_compaction(table, [PiThresholdPolicy(window, reserve, keep)], session_id=sid, prices=prices)
        calls = res.calls.to_pandas()
        index = dict(zip(calls["at_id"], calls["call_index"]))
        calls = calls.sort_values("call_index")
        sim = set(calls.loc[calls["compacted"], "call_index"])
        # the replay's compactions for a next prompt that would not fit the window uncompacted
        next_prompt = calls["prompt_tokens"].shift(-1) + calls["context_before"] - calls["context_after"]
        overflowed = list(calls.loc[calls["compacted"] & (next_prompt > window), "call_index"])
        extra += len(sim - {index.get(a) for a in rows["at_id"]})
        prev_k = -1
        for r in rows.itertuples():
            k = index.get(r.at_id)
            c = classify_one(r, k, prev_k, sim, overflowed, window, reserve)
            prev_k = k if k is not None else prev_k
            counts[c] += 1
            if c != "matched":
                near = sorted(sim, key=lambda s: abs(s - k))[:1] if k is not None else []
                lines.append(f"{sid} call {k} (#{r.nth + 1} on its branch, after a {r.stop_reason} call, "
                             f"tokensBefore {r.tokens_before:.0f}, window {window} {source}): {c}; nearest replay "
                             f"compaction at {near}")
    return counts, extra, lines if verbose else []


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", nargs="*", default=DEFAULT)
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    import pandas  # noqa: F401

    from sessionlab.tables import entries_table

    total: Counter = Counter()
    classes = ["below threshold", "overflow", "aborted", "window exceeded", "settings unknown", "drift",
               "shifted"]
    print("| corpus | recorded compactions | matched | match rate | " + " | ".join(classes) + " | replay extra |")
    print("|---|" + "---:|" * (len(classes) + 4))
    for corpus in args.corpus:
        if not Path(corpus).exists():
            print(f"(no {corpus})", file=sys.stderr)
            continue
        files = sorted(str(p) for p in Path(corpus).rglob("*.jsonl"))
        counts, extra, lines = classify(entries_table(files, on_bad_lines="skip"), args.verbose)
        n = sum(counts.values())
        total.update(counts)
        total["extra"] += extra
        rate = f"{counts['matched'] / n:.1%}" if n else "-"
        print(f"| {corpus} | {n} | {counts['matched']} | {rate} | " + " | ".join(str(counts[c]) for c in classes)
              + f" | {extra} |")
        for line in lines:
            print("   ", line, file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
