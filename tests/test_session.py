"""Session and storages: the seed's complete example, persistence, leaf rules, guards."""

from __future__ import annotations

import json
import shutil

import pytest

from sessionlab import (
    AssistantMessage,
    Cost,
    CycleError,
    EntryNotFoundError,
    InMemorySessionStorage,
    JsonlSessionStorage,
    LeafEntry,
    MessageEntry,
    Session,
    TextContent,
    ToolResultMessage,
    Usage,
    UserMessage,
    message_to_dict,
    new_session_header,
    open_session,
    read_session,
)
from tests._pi_expected import PI

TS = 1768471200000


def user(text):
    return UserMessage(content=(TextContent(text=text),), timestamp=TS)


def assistant(text, *, provider="anthropic", model="claude-sonnet-4-5", inp=100, out=10, cost=0.01):
    usage = Usage(input=inp, output=out, cache_read=0, cache_write=0, total_tokens=inp + out,
                  cost=Cost(input=cost / 2, output=cost / 2, cache_read=0, cache_write=0, total=cost))
    return AssistantMessage(content=(TextContent(text=text),), api="anthropic-messages", provider=provider,
                            model=model, usage=usage, stop_reason="stop", timestamp=TS)


def run_complete_example(storage):
    """The seed's "Complete Session Example", step by step."""
    session = Session(storage)
    msg1 = session.append_message(user("Hello"))
    msg2 = session.append_message(assistant("Hi!"))
    session.append_thinking_level_change("medium")
    session.append_model_change("openai", "gpt-4")
    msg3_m, msg4_m = user("What can you do?"), assistant("I can...", provider="openai", model="gpt-4")
    session.append_message(msg3_m)
    session.append_message(msg4_m)
    usage = Usage(input=1000, output=50, cache_read=0, cache_write=0, total_tokens=1050)
    compact_id = session.append_compaction(
        "User asked about capabilities and assistant explained", msg2, 100000,
        {"summary_length": 50}, False, usage, [msg3_m, msg4_m])
    session.move_to(msg2)
    branch_id = session.move_to(msg2, {"summary": "User changed direction", "details": {"focus": "files"}})
    msg5 = session.append_message(user("Let's work with files"))
    return session, dict(msg1=msg1, msg2=msg2, compact=compact_id, branch=branch_id, msg5=msg5)


@pytest.mark.parametrize("dialect", ["pi", "seed"])
def test_complete_session_example_persists_and_reopens(tmp_path, dialect):
    path = tmp_path / "session.jsonl"
    header = new_session_header(session_id="session_1", cwd="/path")
    session, ids = run_complete_example(JsonlSessionStorage(path, dialect=dialect, header=header))

    ctx = session.build_context()
    assert [m.role for m in ctx.messages] == ["user", "assistant", "branchSummary", "user"]
    assert ctx.messages[2].summary == "User changed direction"
    assert ctx.thinking_level == "off"  # the thinking change is on the other branch
    assert (ctx.model.provider, ctx.model.model_id) == ("anthropic", "claude-sonnet-4-5")
    assert [e.id for e in session.get_branch()] == [ids["msg1"], ids["msg2"], ids["branch"], ids["msg5"]]
    stats = session.get_session_stats()
    assert stats.message_count == 5
    assert stats.messages_by_role == {"user": 3, "assistant": 2}
    assert stats.total_tokens == 220 and stats.cost_total == pytest.approx(0.02)
    assert stats.entries_by_type["leaf"] == 1  # move_to(msg2) recorded the move
    assert session.get_session_stats("branch").message_count == 3

    # the compaction's context on the other branch: summary + retained tail
    cctx = session.build_context(leaf_id=ids["compact"])
    assert [m.role for m in cctx.messages] == ["compactionSummary", "user", "assistant"]
    assert cctx.thinking_level == "medium"
    assert (cctx.model.provider, cctx.model.model_id) == ("openai", "gpt-4")

    reopened = open_session(path)
    assert reopened.storage.dialect == dialect
    assert reopened.get_leaf_id() == ids["msg5"]
    assert reopened.storage.entries == session.storage.entries
    assert reopened.build_context() == ctx
    assert reopened.build_context(leaf_id=ids["compact"]) == cctx
    lines = path.read_text().splitlines()
    assert len(lines) == 1 + len(session.storage.entries)
    assert json.loads(lines[0])["id"] == "session_1"
    key = "parent_id" if dialect == "seed" else "parentId"
    assert all(key in json.loads(line) for line in lines[1:])


def test_in_memory_and_jsonl_give_the_same_session(tmp_path):
    mem, _ = run_complete_example(InMemorySessionStorage(new_session_header(session_id="s")))
    js, _ = run_complete_example(JsonlSessionStorage(tmp_path / "s.jsonl", header=new_session_header(session_id="s")))
    def strip(es):  # ids and times differ
        return [(type(e), getattr(e, "message", None)) for e in es]

    assert strip(mem.storage.entries) == strip(js.storage.entries)

    def view(session):  # synthesized messages carry the (differing) ids and times
        return [{k: v for k, v in message_to_dict(m).items() if k not in ("fromId", "timestamp")}
                for m in session.build_context().messages]

    assert view(mem) == view(js)
    assert len(view(mem)) == 4


def test_move_to_validates_and_can_reset_to_root():
    s = Session(InMemorySessionStorage())
    a = s.append_message(user("a"))
    with pytest.raises(EntryNotFoundError) as err:
        s.move_to("nope")
    assert err.value.code == "not_found"
    s.move_to(None)
    b = s.append_message(user("second root"))
    assert s.get_entry(b).parent_id is None
    assert [e.id for e in s.get_branch(a)] == [a]
    summary_id = s.move_to(None, {"summary": "back to the start"})
    e = s.get_entry(summary_id)
    assert (e.parent_id, e.from_id) == (None, "root")


def test_pi_leaf_record_keeps_pi_on_the_same_branch(tmp_path):
    """pi takes the last line as its leaf; our leaf record's parent is the target."""
    path = tmp_path / "s.jsonl"
    s = Session(JsonlSessionStorage(path, header=new_session_header(session_id="s")))
    a = s.append_message(user("a"))
    s.append_message(assistant("b"))
    s.move_to(a)
    last = json.loads(path.read_text().splitlines()[-1])
    assert last["type"] == "leaf" and last["parentId"] == a and last["targetId"] == a
    # what pi would build: the branch to the last line, unknown types contribute nothing
    from sessionlab.pi.context import build_session_context
    st = s.storage
    pi_path = st.get_branch(last["id"])
    assert [e.id for e in pi_path[:-1]] == [a]
    assert build_session_context(pi_path).messages == s.build_context().messages
    assert open_session(path).get_leaf_id() == a


def test_labels_and_names_follow_pi():
    s = Session(InMemorySessionStorage())
    a = s.append_message(user("a"))
    s.append_label(a, "first")
    s.append_label(a, "second")
    assert s.get_label(a) == "second"
    s.append_label(a, None)
    assert s.get_label(a) is None
    with pytest.raises(EntryNotFoundError):
        s.append_label("missing", "x")
    s.append_session_info("  My session  ")
    assert s.get_session_name() == "My session"  # trimmed
    s.append_session_info("")  # pi 1.6.0: an empty name clears it (0.58.3 kept "My session")
    assert s.get_session_name() is None


def test_cycle_raises_instead_of_hanging():
    # (appending refuses a parent that is not in the session, so a loop can only come from a file)
    st = InMemorySessionStorage(None, [MessageEntry(id="a", parent_id="b", message=user("a")),
                                       MessageEntry(id="b", parent_id="a", message=user("b")),
                                       MessageEntry(id="c", parent_id="c", message=user("c"))])
    for leaf in ("a", "b", "c"):
        with pytest.raises(CycleError) as err:
            Session(st).build_context(leaf_id=leaf)
        assert err.value.code == "cycle"
    with pytest.raises(CycleError):
        st.get_path_to_root_or_compaction("a")


def test_path_to_root_or_compaction():
    s = Session(InMemorySessionStorage())
    u1 = s.append_message(user("1"))
    a1 = s.append_message(assistant("1"))
    u2 = s.append_message(user("2"))
    a2 = s.append_message(assistant("2"))
    c = s.append_compaction("S", u2, 500)
    u3 = s.append_message(user("3"))
    assert [e.id for e in s.storage.get_path_to_root_or_compaction(u3)] == [u2, a2, c, u3]
    assert [e.id for e in s.storage.get_path_to_root_or_compaction(a1)] == [u1, a1]
    c2 = s.append_compaction("S2", None, 100, retained_tail=[user("3")])
    u4 = s.append_message(user("4"))
    assert [e.id for e in s.storage.get_path_to_root_or_compaction(u4)] == [c2, u4]


def test_storage_queries():
    s = Session(InMemorySessionStorage())
    a = s.append_message(user("a"))
    s.append_model_change("openai", "gpt")
    s.append_message(assistant("b"))
    st = s.storage
    assert [e.type for e in st.find_entries("model_change")] == ["model_change"]
    assert len(st.get_entries({"type": "message"})) == 2
    assert [e.id for e in st.get_entries({"leaf_id": a})] == [a]
    eid = st.create_entry_id()
    assert len(eid) == 8 and int(eid, 16) >= 0 and eid not in st.by_id


def test_open_session_does_not_modify_until_append_and_upgrades_v1(tmp_path):
    src = PI / "generated" / "synthetic" / "synthetic-v1-compaction.jsonl"
    path = tmp_path / "v1.jsonl"
    shutil.copy(src, path)
    before = path.read_bytes()
    s = open_session(path)
    ctx_before = s.build_context()
    assert path.read_bytes() == before
    s.append_message(user("new"))
    sf = read_session(path)
    assert sf.version == 3 and sf.issues == []
    assert [e.id for e in sf.entries[:-1]] == [e.id for e in read_session(src).entries]
    assert sf.entries[-1].parent_id == sf.entries[-2].id
    assert open_session(path).build_context().messages == ctx_before.messages + [user("new")]


def test_open_missing_file_is_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        open_session(tmp_path / "nope.jsonl")


def test_reopen_real_file_gives_the_same_leaf_and_context():
    s = open_session(PI / "real" / "before-compaction.jsonl")
    assert s.get_leaf_id() == "000003ea"
    assert len(s.build_context().messages) == 446


def test_tool_result_round_trip_through_storage(tmp_path):
    path = tmp_path / "t.jsonl"
    s = Session(JsonlSessionStorage(path, header=new_session_header(session_id="t")))
    m = ToolResultMessage(tool_call_id="c1", tool_name="read", content=(TextContent(text="ok 😀"),),
                          is_error=False, timestamp=TS)
    s.append_message(m)
    assert open_session(path).build_context().messages == [m]
    assert isinstance(read_session(path).entries[-1], MessageEntry)
    assert not any(isinstance(e, LeafEntry) for e in read_session(path).entries)
