"""Claude Code's usage deduplication with array passes (``dedupe_arrays``) equals the plain rule
(``dedupe_usage``) on random loads: files of usage rows whose message and request ids repeat within
and across files (streamed lines of one response, a subagent's sidechain replay of its parent),
some rows without ids, totals with ties."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionlab.agents._claude_dedupe import dedupe_arrays, dedupe_usage

row = st.tuples(st.one_of(st.none(), st.integers(0, 6)), st.one_of(st.none(), st.integers(0, 2)), st.booleans(),
                st.integers(0, 5))
load = st.lists(st.lists(row, max_size=12), min_size=1, max_size=5)


def plain(files: list[list[tuple]]) -> tuple[np.ndarray, np.ndarray]:
    parts = [([f"m{m}" if m is not None else None for m, _, _, _ in f],
              [f"r{r}" if r is not None else None for _, r, _, _ in f],
              [s for _, _, s, _ in f], [t for _, _, _, t in f], None) for f in files]
    keep, moves = dedupe_usage(parts)
    offsets = np.cumsum([0] + [len(f) for f in files])
    source = np.arange(offsets[-1])
    for fi, mv in enumerate(moves):
        for to, frm in mv.items():
            source[offsets[fi] + to] = offsets[fi] + frm
    return np.array([k for f in keep for k in f], bool), source


@settings(max_examples=400, derandomize=True, deadline=None)
@given(load, st.floats(0, 1))
def test_arrays_equal_the_plain_rule(files, side_share):
    flat = [r for f in files for r in f]
    mid = np.array([-1 if m is None else m for m, _, _, _ in flat], np.int64)
    rid = np.array([-1 if r is None else r for _, r, _, _ in flat], np.int64)
    side = np.array([s and side_share > 0.5 for _, _, s, _ in flat], bool)
    total = np.array([t for _, _, _, t in flat], np.int64)
    file = np.repeat(np.arange(len(files)), [len(f) for f in files])
    files = [[(m, r, s and side_share > 0.5, t) for m, r, s, t in f] for f in files]
    keep, source = dedupe_arrays(mid, rid, side, total, file)
    want_keep, want_source = plain(files)
    assert keep.tolist() == want_keep.tolist()
    assert source.tolist() == want_source.tolist()


def test_a_response_streamed_over_three_lines_counts_once_on_its_first_line():
    # one response in three lines (largest usage on the last), and a subagent file replaying it
    mid = np.array([0, 0, 0, 0])
    rid = np.array([0, 0, 0, -1])
    side = np.array([False, False, False, True])
    total = np.array([10, 20, 30, 30])
    file = np.array([0, 0, 0, 1])
    keep, source = dedupe_arrays(mid, rid, side, total, file)
    assert keep.tolist() == [True, False, False, False]
    assert source.tolist() == [2, 1, 2, 3]
