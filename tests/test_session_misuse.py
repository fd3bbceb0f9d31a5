"""The session system under misuse: no entry lost, no file corrupted, no silent change of a value,
and a clear error (from the package's tree, naming the argument) for every wrong call."""

from __future__ import annotations

import math
import shutil

import pytest

from sessionlab import (
    AmbiguousSessionError,
    ArgumentTypeError,
    ArgumentValueError,
    EntryNotFoundError,
    InMemorySessionRepo,
    InMemorySessionStorage,
    InvalidEntryError,
    InvalidForkTargetError,
    JsonlSessionRepo,
    JsonlSessionStorage,
    MessageEntry,
    Session,
    SessionContextBuildOptions,
    SessionDeletedError,
    SessionError,
    SessionNotFoundError,
    StaleSessionError,
    UnstorableValueError,
    build_session_context,
    open_session,
    read_session,
)
from tests.test_session import assistant, user

# the seed's "JSONL Storage Format" sample, its elided message filled in; its leaf record points
# at msg_5, which is not in the file
SEED_SAMPLE_LINES = [
    '{"type":"session","version":3,"id":"meta_1","timestamp":"...","cwd":"/path","parent_session":null,"metadata":{}}',
    '{"type":"message","id":"msg_1","parent_id":null,"timestamp":"...","message":{"role":"user",'
    '"content":[{"type":"text","text":"Hello"}],"timestamp":0}}',
    '{"type":"thinking_level_change","id":"tl_1","parent_id":"msg_1","timestamp":"...","thinking_level":"medium"}',
    '{"type":"model_change","id":"mc_1","parent_id":"tl_1","timestamp":"...","provider":"openai","model_id":"gpt-4"}',
    '{"type":"compaction","id":"comp_1","parent_id":"mc_1","timestamp":"...","summary":"...",'
    '"first_kept_entry_id":"msg_3","tokens_before":100000}',
    '{"type":"branch_summary","id":"branch_1","parent_id":"comp_1","timestamp":"...","from_id":"msg_3","summary":"..."}',
    '{"type":"active_tools_change","id":"tools_1","parent_id":"branch_1","timestamp":"...",'
    '"active_tool_names":["bash","read"]}',
    '{"type":"leaf","id":"leaf_1","parent_id":"tools_1","timestamp":"...","target_id":"msg_5"}',
]


@pytest.fixture
def seed_sample(tmp_path):
    path = tmp_path / "seed.jsonl"
    path.write_text("\n".join(SEED_SAMPLE_LINES) + "\n")
    return path


def texts(session):
    return [m.content[0].text for m in session.build_context().messages]


def repos(tmp_path):
    return [InMemorySessionRepo(), JsonlSessionRepo(tmp_path)]


# -- 1. append after delete ----------------------------------------------------------------------
@pytest.mark.parametrize("close_first", [True, False])
def test_append_after_delete_is_refused_and_writes_nothing(tmp_path, close_first):
    repo = JsonlSessionRepo(tmp_path)
    s = repo.create(cwd="/p", session_id="doomed")
    s.append_message(user("one"))
    path = s.storage.file_path
    if close_first:
        s.storage.close()
    repo.delete("doomed")
    with pytest.raises(SessionDeletedError) as err:
        s.append_message(user("two"))
    assert isinstance(err.value, FileNotFoundError) and err.value.code == "deleted"
    assert not path.exists()
    assert repo.list() == []


def test_in_memory_session_refuses_appends_after_delete():
    repo = InMemorySessionRepo()
    s = repo.create(cwd="/p", session_id="doomed")
    s.append_message(user("one"))
    repo.delete("doomed")
    with pytest.raises(SessionDeletedError):
        s.append_message(user("two"))
    with pytest.raises(SessionDeletedError):
        s.storage.append_entry(MessageEntry(id="x", message=user("x")))


# -- 2. a full fork starts from the current leaf -------------------------------------------------
@pytest.mark.parametrize("kind", [0, 1])
def test_full_fork_keeps_the_source_leaf(tmp_path, kind):
    repo = repos(tmp_path)[kind]
    s = repo.create(cwd="/p", session_id="src")
    x1 = s.append_message(user("x1"))
    x2 = s.append_message(user("x2"))
    s.move_to(x1)
    s.append_message(user("x3"))
    s.move_to(x2)
    f = repo.fork(s if kind else "src")
    assert texts(f) == ["x1", "x2"] == texts(s)
    assert f.get_leaf_id() == s.get_leaf_id() == x2
    if kind:  # and so does the file, reopened
        assert texts(repo.open(f.storage.get_metadata().id)) == ["x1", "x2"]


# -- 3. a failed fork leaves nothing behind ------------------------------------------------------
@pytest.mark.parametrize("kind", [0, 1])
def test_failed_fork_creates_no_session(tmp_path, kind):
    repo = repos(tmp_path)[kind]
    s = repo.create(cwd="/p", session_id="src")
    s.append_message(user("u"))
    a = s.append_message(assistant("a"))
    before = [i.id for i in repo.list()]
    with pytest.raises(EntryNotFoundError):
        repo.fork("src", "nope", "at")
    with pytest.raises(InvalidForkTargetError):
        repo.fork("src", a, "before")
    with pytest.raises(ArgumentValueError) as err:
        repo.fork("src", a, "after")
    assert err.value.argument == "position"
    assert [i.id for i in repo.list()] == before
    if kind:
        assert len(list(tmp_path.rglob("*.jsonl"))) == 1


# -- 4. ids match whole ----------------------------------------------------------------------------
def test_delete_open_fork_match_the_whole_id(tmp_path):
    repo = JsonlSessionRepo(tmp_path)
    repo.create(cwd="/p", session_id="zzz-unique-session").append_message(user("keep me"))
    for op in (repo.delete, repo.open, repo.fork):
        with pytest.raises(SessionNotFoundError) as err:
            op("zzz")
        assert "zzz-unique-session" in str(err.value)  # the candidate is named
    assert [i.id for i in repo.list()] == ["zzz-unique-session"]


def test_an_id_in_two_folders_is_ambiguous(tmp_path):
    repo = JsonlSessionRepo(tmp_path)
    repo.create(cwd="/a", session_id="twin")
    # the same id under another cwd (written by hand: create refuses an id that is taken)
    src = next(tmp_path.rglob("*.jsonl"))
    other = tmp_path / "--b--" / src.name
    other.parent.mkdir()
    shutil.copy(src, other)
    with pytest.raises(AmbiguousSessionError) as err:
        repo.open("twin")
    assert str(src) in str(err.value) and str(other) in str(err.value)
    with pytest.raises(AmbiguousSessionError):
        repo.delete("twin")
    assert src.exists() and other.exists()


# -- 5. a leaf record pointing at a missing entry ----------------------------------------------
def test_dangling_leaf_record_falls_back_to_the_last_entry(seed_sample):
    s = open_session(seed_sample, on_bad_lines="skip")
    sf = read_session(seed_sample, on_bad_lines="skip")
    assert [i.line for i in sf.issues if i.kind == "dangling_parent"] == [8]
    assert s.get_leaf_id() == "tools_1" == sf.leaf_id  # the last entry, as pi falls back
    assert [e.id for e in s.get_branch()] == ["msg_1", "tl_1", "mc_1", "comp_1", "branch_1", "tools_1"]
    ctx = s.build_context()  # usable, no EntryNotFoundError
    assert [m.role for m in ctx.messages] == ["compactionSummary", "branchSummary"]
    assert ctx.thinking_level == "medium" and ctx.active_tool_names == ("bash", "read")
    assert s.get_session_stats("branch").entry_count == 6
    s.append_message(user("after"))  # and appending works, after tools_1
    assert open_session(seed_sample, on_bad_lines="skip").get_branch()[-2].id == "tools_1"


# -- 6. two handles on one file ------------------------------------------------------------------
def test_second_handle_cannot_append_a_stale_child(tmp_path):
    path = tmp_path / "s.jsonl"
    a = Session(JsonlSessionStorage(path, create=True))
    root = a.append_message(user("root"))
    b = open_session(path)
    a.append_message(user("from a"))
    with pytest.raises(StaleSessionError) as err:
        b.append_message(user("from b"))
    assert err.value.code == "stale"
    sf = read_session(path)
    assert [e.message.content[0].text for e in sf.entries] == ["root", "from a"]
    assert sf.entries[1].parent_id == root
    # a fresh handle sees both and appends after "from a"
    c = open_session(path)
    c.append_message(user("from c"))
    assert texts(open_session(path)) == ["root", "from a", "from c"]


def test_two_handles_on_a_new_file(tmp_path):
    path = tmp_path / "new.jsonl"
    a, b = Session(JsonlSessionStorage(path)), Session(JsonlSessionStorage(path))
    a.append_message(user("a"))
    with pytest.raises(StaleSessionError):
        b.append_message(user("b"))  # b would write a second root under a's header
    assert [e.message.content[0].text for e in read_session(path).entries] == ["a"]


def test_file_replaced_under_a_handle_is_detected(tmp_path):
    path = tmp_path / "s.jsonl"
    a = Session(JsonlSessionStorage(path, create=True))
    a.append_message(user("root"))
    b = open_session(path)
    b.append_message(user("b"))  # b is current: fine
    data = path.read_bytes()
    path.unlink()
    path.write_bytes(data)  # same bytes, another file
    with pytest.raises(StaleSessionError):
        b.append_message(user("again"))
    with pytest.raises(StaleSessionError):
        a.append_message(user("a is stale too"))


# -- 7. values that would change on save ------------------------------------------------------
@pytest.mark.parametrize("value,where", [
    (math.nan, "data['x']"), (math.inf, "data['x']"), ({1: "a"}, "data['x']"),
    (10**30, "data['x']"), ({"s": {1, 2}}, "data['x']['s']"),
])
@pytest.mark.parametrize("kind", ["memory", "jsonl"])
def test_values_json_cannot_hold_are_refused(tmp_path, value, where, kind):
    storage = InMemorySessionStorage() if kind == "memory" else JsonlSessionStorage(tmp_path / "s.jsonl")
    s = Session(storage)
    s.append_message(user("a"))
    n = len(storage.entries)
    with pytest.raises(UnstorableValueError) as err:
        s.append_custom("t", {"x": value})
    assert where in str(err.value) and err.value.argument == where
    assert isinstance(err.value, ValueError)
    assert len(storage.entries) == n
    if kind == "jsonl":
        assert len(read_session(storage.file_path).entries) == n


@pytest.mark.parametrize("kind", ["memory", "jsonl"])
def test_memory_and_file_agree_after_every_append(tmp_path, kind):
    path = tmp_path / "s.jsonl"
    storage = InMemorySessionStorage() if kind == "memory" else JsonlSessionStorage(path)
    s = Session(storage)
    s.append_message(user("a"))
    s.append_custom("t", {"pair": (1, 2), "big": 2**53 - 1, "f": 1.5, "nested": [{"k": None}]})
    s.append_custom_message("note", "hello", details={"t": (3,)})
    e = s.get_entry(s.get_leaf_id())
    assert e.details == {"t": [3]}
    assert s.get_entry(s.get_branch()[-2].id).data["pair"] == [1, 2]
    if kind == "jsonl":
        assert read_session(path).entries == storage.entries


# -- bad arguments -------------------------------------------------------------------------------
def _session():
    s = Session(InMemorySessionStorage())
    s.append_message(user("u"))
    return s


@pytest.mark.parametrize("call,argument,err", [
    (lambda s: s.append_active_tools_change("bash"), "active_tool_names", ArgumentTypeError),
    (lambda s: s.append_active_tools_change(["bash", 3]), "active_tool_names[1]", ArgumentTypeError),
    (lambda s: s.append_message("hi"), "message", ArgumentTypeError),
    (lambda s: s.append_thinking_level_change(5), "thinking_level", ArgumentTypeError),
    (lambda s: s.append_thinking_level_change("extreme"), "thinking_level", ArgumentValueError),
    (lambda s: s.append_model_change("openai", 42), "model_id", ArgumentTypeError),
    (lambda s: s.append_compaction("sum", None, "100"), "tokens_before", ArgumentTypeError),
    (lambda s: s.append_compaction("sum", None, -1), "tokens_before", ArgumentValueError),
    (lambda s: s.append_label(s.get_leaf_id(), 5), "label", ArgumentTypeError),
    (lambda s: s.append_session_info(5), "name", ArgumentTypeError),
    (lambda s: s.append_custom(3), "custom_type", ArgumentTypeError),
    (lambda s: s.append_custom_message("k", [{"type": "text", "text": "x"}]), "content[0]", ArgumentTypeError),
    (lambda s: s.build_context({"entry_transforms": []}), "options", ArgumentTypeError),
    (lambda s: s.get_session_stats("all"), "scope", ArgumentValueError),
    (lambda s: s.move_to(s.get_leaf_id(), {"text": "x"}), "summary", ArgumentValueError),
])
def test_bad_arguments_name_the_argument(call, argument, err):
    s = _session()
    n = len(s.storage.entries)
    with pytest.raises(err) as info:
        call(s)
    assert info.value.argument == argument
    assert argument.split("[")[0] in str(info.value)
    assert len(s.storage.entries) == n  # nothing stored


def test_typed_entry_needs_a_new_id():
    s = _session()
    leaf = s.get_leaf_id()
    with pytest.raises(InvalidEntryError):
        s.append_typed_entry(MessageEntry(parent_id=leaf, message=user("no id")))
    with pytest.raises(InvalidEntryError) as err:
        s.append_typed_entry(MessageEntry(id=leaf, parent_id=leaf, message=user("same id")))
    assert leaf in str(err.value)
    with pytest.raises(EntryNotFoundError):
        s.append_typed_entry(MessageEntry(id="n1", parent_id="missing", message=user("orphan")))
    assert [e.id for e in s.storage.entries] == [leaf]


@pytest.mark.parametrize("kind", [0, 1])
def test_leaf_records_are_not_targets(tmp_path, kind):
    repo = repos(tmp_path)[kind]
    s = repo.create(cwd="/p", session_id="src")
    a = s.append_message(user("a"))
    s.append_message(user("b"))
    s.move_to(a)
    record = s.storage.entries[-1]
    assert record.type == "leaf"
    with pytest.raises(InvalidEntryError):
        s.move_to(record.id)
    with pytest.raises(InvalidEntryError):
        s.append_label(record.id, "x")
    with pytest.raises(InvalidForkTargetError):
        repo.fork("src", record.id, "at")
    assert s.get_leaf_id() == a


def test_build_session_context_checks_its_input():
    s = _session()
    path = s.get_branch()
    assert build_session_context(iter(path)) == build_session_context(path)  # any iterable
    with pytest.raises(ArgumentTypeError) as err:
        build_session_context(["x", 1])
    assert err.value.argument == "path_entries[0]"
    none_transform = SessionContextBuildOptions(entry_transforms=(lambda entries: None,))
    with pytest.raises(ArgumentTypeError, match="transform"):
        build_session_context(path, none_transform)
    s.append_custom("c")
    proj = SessionContextBuildOptions(entry_projectors={"c": lambda e, i, es: None})
    with pytest.raises(ArgumentTypeError, match="projector"):
        s.build_context(proj)


def test_open_session_errors(tmp_path):
    with pytest.raises(SessionNotFoundError) as err:
        open_session(tmp_path / "nope.jsonl")
    assert isinstance(err.value, FileNotFoundError)
    with pytest.raises(ArgumentValueError, match="folder"):
        open_session(tmp_path)


@pytest.mark.parametrize("kwargs,argument", [
    ({"session_id": "x" * 300}, "session_id"), ({"session_id": "x.jsonl"}, "session_id"),
    ({"cwd": "/" + "d" * 300}, "cwd"), ({"cwd": 5}, "cwd"),
])
def test_repo_create_refuses_ids_and_cwds_that_cannot_be_files(tmp_path, kwargs, argument):
    repo = JsonlSessionRepo(tmp_path)
    with pytest.raises((ArgumentValueError, ArgumentTypeError)) as err:
        repo.create(**{"cwd": "/p", **kwargs})
    assert err.value.argument == argument
    assert not any(tmp_path.iterdir())


def test_errors_are_in_the_tree():
    for cls in (SessionDeletedError, StaleSessionError, SessionNotFoundError, AmbiguousSessionError,
                InvalidEntryError):
        assert issubclass(cls, SessionError)
    assert issubclass(UnstorableValueError, ArgumentValueError)


# -- 8. two processes appending to one old (v1) file: the upgrade to v3 loses nothing ---------------
def _append_after_barrier(path, text, barrier, out):
    s = open_session(path)
    barrier.wait()
    try:
        s.append_message(user(text))
        out.put((text, "ok"))
    except StaleSessionError:
        out.put((text, "stale"))


def test_concurrent_first_appends_to_an_old_file_lose_nothing(tmp_path, pi_data):
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    src = pi_data / "generated/synthetic/synthetic-v1-compaction.jsonl"
    for trial in range(8):
        path = tmp_path / f"old-{trial}.jsonl"
        shutil.copy(src, path)
        barrier, out = ctx.Barrier(2), ctx.Queue()
        procs = [ctx.Process(target=_append_after_barrier, args=(path, f"p{i}", barrier, out)) for i in range(2)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(30)
        results = dict(out.get(timeout=5) for _ in procs)
        acked = {t for t, r in results.items() if r == "ok"}
        assert acked, results  # at least one append goes through
        sf = read_session(path)
        assert sf.version == 3 and not sf.issues
        texts_in_file = {e.message.content[0].text for e in sf.entries if getattr(e, "message", None) is not None
                         and e.message.role == "user"}
        assert acked <= texts_in_file, (trial, results)


# -- 9. one Session shared by threads: one chain, no stale handle ------------------------------------
@pytest.mark.parametrize("kind", ["memory", "jsonl"])
def test_a_session_shared_by_threads_appends_one_chain(tmp_path, kind):
    import threading

    path = tmp_path / "t.jsonl"
    s = Session(InMemorySessionStorage() if kind == "memory" else JsonlSessionStorage(path))
    s.append_message(user("root"))
    errors: list[BaseException] = []
    n_threads, n_each = 8, 100
    start = threading.Barrier(n_threads)

    def work(t):
        start.wait()
        for i in range(n_each):
            try:
                if i % 25 == 0:
                    s.append_session_info(f"thread {t}")
                else:
                    s.append_message(user(f"{t}-{i}"))
            except BaseException as exc:  # noqa: BLE001 - collected and asserted below
                errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    entries = (s.storage.get_entries() if kind == "memory" else read_session(path).entries)
    assert len(entries) == 1 + n_threads * n_each
    # one chain: every entry's parent is the entry before it (no unintended fork point)
    assert all(e.parent_id == p.id for p, e in zip(entries, entries[1:]))
    assert len(s.get_branch()) == 1 + n_threads * n_each


# -- 10. forking a handle whose file another handle appended to ---------------------------------------
def test_fork_of_a_stale_handle_is_refused(tmp_path):
    repo = JsonlSessionRepo(tmp_path)
    a = repo.create(cwd="/p")
    root = a.append_message(user("root"))
    b = open_session(a.storage.file_path)
    a.append_message(user("from a"))  # b no longer sees the whole file
    before = sorted(tmp_path.rglob("*.jsonl"))
    with pytest.raises(StaleSessionError):
        repo.fork(b, root, position="at")
    assert sorted(tmp_path.rglob("*.jsonl")) == before  # nothing was created
    fork = repo.fork(open_session(a.storage.file_path))  # a fresh handle forks the whole file
    assert texts(fork) == ["root", "from a"]
