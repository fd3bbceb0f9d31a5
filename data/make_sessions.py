"""Regenerate the sample sessions in ``data/sessions/`` with :mod:`sessionlab.synth`.

Run from the repository root::

    python data/make_sessions.py

The output is deterministic: the same sessionlab version writes the same bytes. Old files in
``data/sessions/`` are removed first. ``data/pi/`` (copies of pi's own fixtures) is not touched.
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

from sessionlab.synth import encode_cwd, generate_session

OUT = Path(__file__).resolve().parent / "sessions"

# (cwd, keyword arguments of generate_session); each comment says what the session shows. Written
# as pi 0.58 wrote them unless "pi" says otherwise
SESSIONS: list[tuple[str, dict]] = [
    # several branches, some with a branch_summary
    ("/home/user/webapp", {
        "seed": 11, "turns": 30, "max_bytes": 300_000, "branch_prob": 0.3, "branch_summary_prob": 0.6,
        "result_scale": 0.3, "start": datetime(2026, 1, 12, 9, 14, 3, tzinfo=UTC)}),
    # two compactions in a long session with a small window
    ("/home/user/api-server", {
        "seed": 21, "turns": 60, "max_bytes": 380_000, "compaction_window": 30_000, "branch_prob": 0.0,
        "result_scale": 0.35, "start": datetime(2026, 1, 14, 13, 2, 41, tzinfo=UTC)}),
    # model switches across anthropic, openai and google
    ("/home/user/ml-pipeline", {
        "seed": 34, "turns": 30, "max_bytes": 250_000, "model_switch_prob": 0.35, "thinking_change_prob": 0.15,
        "result_scale": 0.3, "start": datetime(2026, 1, 20, 16, 45, 9, tzinfo=UTC)}),
    # labels set and cleared, a session name
    ("/home/user/rust-cli", {
        "seed": 48, "turns": 30, "max_bytes": 250_000, "label_prob": 0.45, "name_prob": 1.0,
        "result_scale": 0.3, "start": datetime(2026, 2, 2, 10, 30, 0, tzinfo=UTC)}),
    # a bit of everything: user ! commands, extension entries, a branch, an aborted call
    ("/home/user/webapp", {
        "seed": 58, "turns": 40, "max_bytes": 300_000, "bash_prob": 0.2, "custom_prob": 0.2, "branch_prob": 0.1,
        "label_prob": 0.1, "model_switch_prob": 0.05, "result_scale": 0.3,
        "start": datetime(2026, 2, 9, 8, 5, 55, tzinfo=UTC)}),
]


def main() -> list[Path]:
    """Write the sessions; return their paths."""
    if OUT.exists():
        shutil.rmtree(OUT)
    return [generate_session(OUT / encode_cwd(cwd), cwd=cwd, **{"pi": "0.58", **kw}) for cwd, kw in SESSIONS]


if __name__ == "__main__":
    for p in main():
        print(f"{p.stat().st_size:>8,}  {p.relative_to(OUT.parent.parent)}")
