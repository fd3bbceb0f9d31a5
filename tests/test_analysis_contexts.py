"""Vectorised contexts against pi's results and the object model on real and generated files."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from sessionlab import MissingColumnError, message_to_dict, open_session
from sessionlab.analysis import context_members, context_messages, contexts
from sessionlab.pi.context import project_context_entries
from sessionlab.pi.tokens import estimate_context_tokens, estimate_tokens
from sessionlab.tables import entries_table, table_rules
from tests._edited import FIRST, edited_tail, expected, got, removed_system
from tests._pi_expected import PI, leaf_cases

DATA = Path(__file__).parent.parent / "data"


@pytest.fixture(scope="module")
def pi_table():
    return entries_table(PI, on_bad_lines="skip", rules="pi-0.58")  # pi 0.58.3's results (test_pi16: 1.6)


@pytest.fixture(scope="module")
def data_table():
    return entries_table(DATA, agents=["pi"])


CASES = leaf_cases()


def test_leaves_match_pi(pi_table):
    got = {(r["file"].split("/data/pi/")[-1], r["at_id"]): r for r in contexts(pi_table, at="leaves").to_pylist()}
    assert len(CASES) == 21
    for _, exp, leaf in CASES:
        r = got[(exp["file"], leaf["leafId"])]
        want = leaf["context"]
        model = None if r["model"] is None else {"provider": r["provider"], "modelId": r["model"]}
        assert (r["message_count"], r["thinking_level"], model) == (want["messageCount"], want["thinkingLevel"], want["model"])
        ce = leaf["compaction"]["contextEstimate"]
        assert (r["context_tokens"], r["usage_tokens"], r["trailing_tokens"]) == (
            ce["tokens"], ce["usageTokens"], ce["trailingTokens"])


def _object_members(session, entry_id, rules):
    path = session.get_branch(entry_id)
    return [p.entry.id for p in project_context_entries(path, rules=rules) for _ in p.messages]


@pytest.mark.parametrize("which", ["pi", "data"])
def test_every_call_equals_the_object_model(which, pi_table, data_table):
    table = pi_table if which == "pi" else data_table
    files = sorted(set(table["file"].to_pylist()))
    checked = 0
    for file in files:
        if "no-header" in file or "/v4/" in file:  # v4: the harness's rules (test_v4, test_pi16)
            continue
        session = open_session(file, on_bad_lines="skip")
        sub = table.filter(pc.equal(table["file"], file))
        rows = contexts(sub, at="calls").to_pylist()
        members = defaultdict(list)
        for m in context_members(sub, at="calls").to_pylist():
            members[m["at_id"]].append(m["entry_id"])
        for r in rows:
            parent = session.get_entry(r["at_id"]).parent_id
            rules = table_rules(table)
            msgs = (session.build_context(leaf_id=parent, rules=rules).messages
                    if parent in session.storage.by_id else [])
            assert r["message_count"] == len(msgs)
            assert r["context_tokens"] == estimate_context_tokens(msgs, rules=rules).tokens
            if parent in session.storage.by_id:
                assert members[r["at_id"]] == _object_members(session, parent, rules)
            checked += 1
    assert checked > (100 if which == "pi" else 300)


def test_context_messages_equal_build_context(data_table):
    row = contexts(data_table, at="leaves").to_pylist()[3]
    session = open_session(row["file"])
    got = context_messages(data_table, row["at_id"], session_id=row["session_id"])
    assert [message_to_dict(m) for m in got] == [
        message_to_dict(m) for m in session.build_context(leaf_id=row["at_id"]).messages]
    assert len(got) == row["message_count"] > 0


def test_targets_by_id_and_root_calls(pi_table):
    one = contexts(pi_table, at=["000003ea"]).to_pylist()
    assert {r["message_count"] for r in one if r["file"].endswith("before-compaction.jsonl")} == {446}
    # the first assistant of a session: its context is the first user message
    calls = contexts(pi_table, at="calls").to_pylist()
    first = next(r for r in calls if r["file"].endswith("large-session.jsonl"))
    assert first["message_count"] == 1 and first["usage_tokens"] == 0


def test_pandas_input_gives_the_same_result(data_table):
    assert contexts(data_table.to_pandas(), at="leaves").to_pylist() == contexts(data_table, at="leaves").to_pylist()


def test_unknown_target_kind_is_an_error(data_table):
    with pytest.raises(ValueError):
        contexts(data_table, at="everything")


def test_session_id_picks_one_session_when_ids_repeat(pi_table):
    # the three v1 files share counter ids such as 00000005
    every = contexts(pi_table, at=["00000005"]).to_pylist()
    assert len({r["session_id"] for r in every}) > 1
    sid = "ffae836b-9420-4060-ac13-7745215f90ff"
    one = contexts(pi_table, at=["00000005"], session_id=sid).to_pylist()
    assert [r["session_id"] for r in one] == [sid]
    assert one == [r for r in every if r["session_id"] == sid]
    members = context_members(pi_table, at=["00000005"], session_id=sid).to_pylist()
    assert {m["session_id"] for m in members} == {sid} and len(members) == one[0]["message_count"]
    from sessionlab import find_cut_points

    cuts = find_cut_points(pi_table, at=["00000005"], session_id=sid).to_pylist()
    assert [c["session_id"] for c in cuts] == [sid]


def test_tables_without_the_load_index_give_the_same_contexts(data_table):
    """The loader maps ids to rows once (entry_index/parent_index); a table without those columns,
    or with its rows shuffled, is mapped again from the ids, with the same results."""
    import numpy as np

    want = sorted(contexts(data_table, at="calls").to_pylist(), key=lambda r: (r["file"], r["at_id"]))
    no_index = data_table.drop_columns(["entry_index", "parent_index"])
    shuffled = data_table.take(np.random.default_rng(0).permutation(data_table.num_rows))
    for table in (no_index, shuffled):
        got = sorted(contexts(table, at="calls").to_pylist(), key=lambda r: (r["file"], r["at_id"]))
        assert got == want


# -- analyses are functions of the table: pi 1.6's rare edit cases need no session file ----------

@pytest.mark.parametrize("make", [removed_system, edited_tail], ids=lambda f: f.__name__)
def test_edited_contexts_need_no_session_file(make, tmp_path, monkeypatch):
    path = tmp_path / "s.jsonl"
    entries, edit_id = make(path)
    table = entries_table(path)
    path.unlink()  # as a table read back from Parquet, or a Dask partition of s3:// files

    def no_reads(*args, **kwargs):
        raise AssertionError("an analysis read a session file")

    monkeypatch.setattr("sessionlab.pi.io.reader.read_session", no_reads)
    want = expected(entries)
    assert got(contexts(table, at="entries")) == want
    # (the edit's own context is one of the rare cases: its usage is no longer current, and what it
    # leaves is not what the table's per-row estimates say)
    count, tokens, projected = want[edit_id]
    assert projected < tokens
    members = [r["entry_id"] for r in context_members(table, at=[edit_id]).to_pylist()]
    assert len(members) == count


def test_removing_a_system_message_replays_the_others(tmp_path):
    entries, edit_id = removed_system(tmp_path / "s.jsonl")
    table = entries_table(tmp_path / "s.jsonl")
    (tmp_path / "s.jsonl").unlink()
    r = contexts(table, at=[edit_id]).to_pylist()[0]
    # FIRST alone (SECOND, which patched it, is removed), then the user, the call and the user after it
    rest = [estimate_tokens(m) for m in (entries[1].message, entries[2].message, entries[4].message)]
    assert r["projected_tokens"] == estimate_tokens(FIRST) + sum(rest)
    assert estimate_tokens(FIRST) != table["system_est_tokens"][3].as_py()  # (FIRST and SECOND replayed)


@pytest.mark.parametrize("how", ["dropped", "null"])
def test_a_table_without_system_json_names_the_missing_column(how, tmp_path):
    _, edit_id = removed_system(tmp_path / "s.jsonl")
    table = entries_table(tmp_path / "s.jsonl")
    k = table.schema.get_field_index("system_json")
    table = table.remove_column(k) if how == "dropped" else table.set_column(
        k, table.schema.field(k), pa.nulls(table.num_rows, pa.string()))
    with pytest.raises(MissingColumnError, match="system_json") as err:
        contexts(table, at="entries")
    assert err.value.column == "system_json" and isinstance(err.value, ValueError)
    # (only a context that needs the replay needs the column)
    assert contexts(table, at=["e0000002", "e0000004"])["projected_tokens"].to_pylist() == [5_000, 5_279]
