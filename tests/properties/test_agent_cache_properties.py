"""The cache on Claude Code and Codex files that grow in random pieces: every reload equals a
fresh load (entries, sessions and issues), whether a grown file was extended by its new lines alone
or read whole. Generated sessions (random seeds, subagents, forks); each piece ends anywhere,
mid-line included, and an optional damaged line is appended along the way."""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

import sessionlab as sl
from sessionlab.synth import generate_claude_session, generate_codex_session
from sessionlab.tables import load_files


def _tables(src: Path, cache: object) -> tuple:
    res = load_files(src, on_bad_lines="skip", cache=cache)
    return (sl.entries_table(src, on_bad_lines="skip", cache=cache),
            sl.sessions_table(src, on_bad_lines="skip", cache=cache), [i for r in res.files for i in r.issues])


@settings(max_examples=30, derandomize=True, deadline=None)
@given(st.sampled_from(["claude", "codex"]), st.integers(0, 50), st.lists(st.floats(0.05, 1.0), min_size=1,
                                                                         max_size=4), st.booleans())
def test_growing_agent_files_reload_equal_to_fresh(agent, seed, cuts, damaged):
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        start = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
        if agent == "claude":
            main = generate_claude_session(base / "gen", seed=seed, turns=4, start=start)
            root = base / "gen" / "projects"
        else:
            main = generate_codex_session(base / "gen" / "sessions", seed=seed, turns=4, start=start)
            root = base / "gen" / "sessions"
        whole = main.read_bytes()
        cache = base / "cache"
        points = sorted({int(len(whole) * c) for c in cuts}) + [len(whole)]
        for i, p in enumerate(points):
            data = whole[:p]
            if damaged and i == 0:
                data += b'{"type": "not json\n'
            main.write_bytes(data if not (damaged and i > 0) else whole[:points[0]] + b'{"type": "not json\n'
                             + whole[points[0]:p])
            got = _tables(root, cache)
            want = _tables(root, False)
            assert got[0].equals(want[0])
            assert got[1].equals(want[1])
            assert got[2] == want[2]
