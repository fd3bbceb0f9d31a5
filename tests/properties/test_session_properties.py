"""Properties of the session system on random trees (branches, compactions, labels, moves)."""

from __future__ import annotations

import itertools
import tempfile
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from sessionlab import (
    AssistantMessage,
    InMemorySessionRepo,
    InMemorySessionStorage,
    JsonlSessionRepo,
    JsonlSessionStorage,
    Session,
    TextContent,
    Usage,
    UserMessage,
    new_session_header,
    open_session,
)

text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
ops = st.lists(
    st.one_of(
        st.tuples(st.just("user"), text),
        st.tuples(st.just("assistant"), st.sampled_from(["stop", "toolUse", "aborted", "error"]),
                  st.integers(0, 5000)),
        st.tuples(st.just("model"), st.sampled_from(["anthropic", "openai"]), st.sampled_from(["m1", "m2"])),
        st.tuples(st.just("thinking"), st.sampled_from(["off", "low", "high"])),
        st.tuples(st.just("label"), st.integers(0, 10_000), st.one_of(st.none(), st.just(""), text)),
        st.tuples(st.just("name"), text),
        st.tuples(st.just("custom"), text),
        st.tuples(st.just("custom_message"), text),
        st.tuples(st.just("compact"), st.integers(0, 10_000), st.booleans()),
        st.tuples(st.just("move"), st.integers(-1, 10_000), st.one_of(st.none(), text)),
    ),
    max_size=30,
)


@contextmanager
def deterministic():
    """Same ids and times for every storage the ops are replayed on."""
    counter = itertools.count(1)

    class FakeUUID:
        def __init__(self) -> None:
            self.hex = f"{next(counter):08x}" + "0" * 24

        def __str__(self) -> str:
            return self.hex

    clock = itertools.count(0)
    with mock.patch("sessionlab.pi.storage.uuid.uuid4", FakeUUID), \
         mock.patch("sessionlab.pi.session.create_timestamp",
                    lambda: f"2026-01-01T00:{(next(clock) // 60) % 60:02d}:{next(clock) % 60:02d}.000Z"), \
         mock.patch("sessionlab.pi.storage.create_timestamp", lambda: "2026-01-01T01:00:00.000Z"):
        yield


def replay(storage, script) -> Session:
    s = Session(storage)
    for op in script:
        ids = [e.id for e in storage.entries if e.type != "leaf"]
        kind = op[0]
        if kind == "user":
            s.append_message(UserMessage(content=op[1], timestamp=1))
        elif kind == "assistant":
            tokens = op[2]
            s.append_message(AssistantMessage(
                content=(TextContent(text="a"),), provider="p", model="m", stop_reason=op[1],
                usage=Usage(input=tokens, output=1, cache_read=0, cache_write=0, total_tokens=tokens + 1),
                timestamp=2))
        elif kind == "model":
            s.append_model_change(op[1], op[2])
        elif kind == "thinking":
            s.append_thinking_level_change(op[1])
        elif kind == "label" and ids:
            s.append_label(ids[op[1] % len(ids)], op[2])
        elif kind == "name":
            s.append_session_info(op[1])
        elif kind == "custom":
            s.append_custom("ext", {"t": op[1]})
        elif kind == "custom_message":
            s.append_custom_message("ext", op[1])
        elif kind == "compact" and ids:
            branch = s.get_branch()
            if branch:
                kept = branch[op[1] % len(branch)]
                tail = [e.message for e in branch[-2:] if e.type == "message"] if op[2] else None
                s.append_compaction("summary", kept.id, 100, retained_tail=tail)
        elif kind == "move":
            target = None if op[1] < 0 or not ids else ids[op[1] % len(ids)]
            s.move_to(target, None if op[2] is None else {"summary": op[2]})
    return s


def contexts(session):
    ids = [e.id for e in session.storage.entries if e.type != "leaf"]
    return [session.build_context(leaf_id=i) for i in ids] + [session.build_context()]


@settings(max_examples=60)
@given(ops, st.sampled_from(["pi", "seed"]))
def test_memory_and_jsonl_storages_agree_and_reopen_the_same(script, dialect):
    with deterministic():
        mem = replay(InMemorySessionStorage(new_session_header(session_id="s", timestamp="t", cwd="/")), script)
    with tempfile.TemporaryDirectory() as d, deterministic():
        path = Path(d) / "s.jsonl"
        js = replay(JsonlSessionStorage(path, dialect=dialect,
                                        header=new_session_header(session_id="s", timestamp="t", cwd="/")), script)
        assert js.storage.entries == mem.storage.entries
        assert js.get_leaf_id() == mem.get_leaf_id()
        assert contexts(js) == contexts(mem)
        if js.storage.entries:
            again = open_session(path, on_bad_lines="skip")
            assert again.storage.entries == js.storage.entries
            assert again.get_leaf_id() == js.get_leaf_id()
            assert again.storage.labels_by_id == js.storage.labels_by_id
            assert again.get_session_name() == js.get_session_name()
            assert contexts(again) == contexts(js)


@settings(max_examples=40)
@given(ops, st.integers(0, 10_000), st.sampled_from(["before", "at"]), st.booleans())
def test_fork_keeps_the_context_at_the_fork_point(script, pick, position, on_disk):
    with tempfile.TemporaryDirectory() as d:
        repo = JsonlSessionRepo(d) if on_disk else InMemorySessionRepo()
        src = repo.create(cwd="/p", session_id="src")
        replay(src.storage, script)
        ids = [e.id for e in src.storage.entries if e.type != "leaf"]
        if not ids:
            return
        target = src.get_entry(ids[pick % len(ids)])
        if position == "before" and target.type == "message" and target.message.role != "user":
            return
        fork = repo.fork("src", target.id, position)
        point = target.id if position == "at" else target.parent_id
        want = src.build_context(leaf_id=point) if point is not None else Session(InMemorySessionStorage()).build_context()
        assert fork.build_context() == want
