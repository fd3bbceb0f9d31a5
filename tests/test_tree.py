"""The networkx tree against pi's getTree rows and leaf ids (tests/data/pi/expected)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sessionlab import CycleError, EntryNotFoundError
from sessionlab.tables import entries_table
from sessionlab.tree import children, current_branch, depths, fork_points, leaves, roots, session_tree

DATA = Path(__file__).parent / "data" / "pi"
EXPECTED = [p for p in sorted((DATA / "expected").glob("*__*.json")) if json.loads(p.read_text())["valid"]]


@pytest.mark.parametrize("exp_path", EXPECTED, ids=lambda p: p.name[:40])
def test_tree_matches_pi(exp_path):
    exp = json.loads(exp_path.read_text())
    g = session_tree(entries_table(DATA / exp["file"], on_bad_lines="skip"))
    assert g.graph["session_id"] == exp["header"]["id"]
    assert g.graph["leaf_id"] == exp["defaultLeafId"]
    assert leaves(g) == exp["leafIds"]
    rows = exp["tree"]
    parents = {r["parentId"] for r in rows}
    assert roots(g) == [r["id"] for r in rows if r["parentId"] is None or r["parentId"] not in g
                        or r["parentId"] == r["id"]]
    for r in rows:
        assert children(g, r["id"]) == r["children"]
        assert g.nodes[r["id"]]["type"] == r["type"]
    assert fork_points(g) == [n for n in g.nodes if len(children(g, n)) >= 2]
    assert set(fork_points(g)) <= parents
    assert current_branch(g) == exp["current"]["branchIds"]
    for leaf in exp["leaves"]:
        assert current_branch(g, leaf["leafId"]) == leaf["branchIds"]
    d = depths(g)
    assert all(d[n] == len(current_branch(g, n)) - 1 for n in g.nodes)


def test_needs_a_session_id_for_many_sessions():
    t = entries_table(DATA / "generated" / "sessions", on_bad_lines="skip")
    with pytest.raises(ValueError):
        session_tree(t)
    with pytest.raises(EntryNotFoundError):
        session_tree(t, session_id="nope")
    g = session_tree(t.to_pandas(), session_id="00000001-0000-4000-8000-000000000000")
    assert g.nodes["00000005"]["role"] == "assistant"
    with pytest.raises(EntryNotFoundError):
        current_branch(g, "zzz")


def test_cycle_is_reported(tmp_path):
    f = tmp_path / "c.jsonl"
    f.write_text('{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}\n'
                 '{"type":"label","id":"a","parentId":"b","timestamp":"2026-01-01T00:00:01.000Z","targetId":"b","label":"x"}\n'
                 '{"type":"label","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","targetId":"a","label":"y"}\n')
    g = session_tree(entries_table(f, on_bad_lines="skip"))
    with pytest.raises(CycleError):
        current_branch(g)
    assert depths(g) == {}
