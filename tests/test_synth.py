"""Tests of sessionlab.synth: determinism, exact pi lines, features, usage arithmetic, corpus size."""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sessionlab.pi.io import read_session, to_line
from sessionlab.pi.model import AssistantMessage, MessageEntry
from sessionlab.synth import MODELS, encode_cwd, generate_corpus, generate_session, session_file_name

ROOT = Path(__file__).resolve().parent.parent

# a session with every feature switched up, small enough to be quick
RICH = {"turns": 45, "branch_prob": 0.2, "branch_summary_prob": 0.6, "compaction_window": 30_000, "model_switch_prob": 0.2,
            "thinking_change_prob": 0.1, "label_prob": 0.3, "name_prob": 1.0, "custom_prob": 0.2, "bash_prob": 0.2,
            "result_scale": 0.3}


@pytest.fixture(scope="module")
def rich(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate_session(tmp_path_factory.mktemp("rich"), seed=3, **RICH)


def _objs(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _generated_files(rich: Path) -> list[Path]:
    return [rich, *sorted((ROOT / "data" / "sessions").rglob("*.jsonl"))]


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    a = generate_session(tmp_path / "a", seed=5, **RICH)
    b = generate_session(tmp_path / "b", seed=5, **RICH)
    c = generate_session(tmp_path / "c", seed=6, **RICH)
    assert a.name == b.name
    assert a.read_bytes() == b.read_bytes()
    assert c.read_bytes() != a.read_bytes()
    assert c.name != a.name


def test_file_name_and_header(tmp_path: Path) -> None:
    start = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
    p = generate_session(tmp_path, seed=1, turns=2, cwd="/home/user/x", start=start)
    header = _objs(p)[0]
    assert list(header) == ["type", "version", "id", "timestamp", "cwd"]
    assert header["version"] == 3 and header["cwd"] == "/home/user/x"
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", header["id"])
    assert header["timestamp"].startswith("2026-03-01T12:00:00.")
    assert p.name == session_file_name(header["timestamp"], header["id"])
    assert re.fullmatch(r"2026-03-01T12-00-00-\d{3}Z_[0-9a-f-]{36}\.jsonl", p.name)
    explicit = generate_session(tmp_path / "here.jsonl", seed=1, turns=2, cwd="/home/user/x", start=start)
    assert explicit == tmp_path / "here.jsonl" and explicit.read_bytes() == p.read_bytes()


@pytest.mark.parametrize(("cwd", "folder"), [("/home/user/proj", "--home-user-proj--"),
                                             ("C:\\Users\\me", "--C--Users-me--"), ("/a/b-c", "--a-b-c--")])
def test_encode_cwd(cwd: str, folder: str) -> None:
    assert encode_cwd(cwd) == folder


def test_reads_back_without_issues_and_lines_are_pi_lines(rich: Path) -> None:
    for path in _generated_files(rich):
        sf = read_session(path, on_bad_lines="raise")
        assert sf.issues == [] and sf.version == 3 and sf.dialect == "pi"
        lines = path.read_text(encoding="utf-8").split("\n")
        assert lines[-1] == ""
        assert len(lines) - 1 == len(sf.entries) + 1
        for obj, line in zip([sf.header, *sf.entries], lines):
            assert to_line(obj) == line


def test_tree_structure(rich: Path) -> None:
    objs = _objs(rich)
    entries = objs[1:]
    ids = [e["id"] for e in entries]
    assert all(re.fullmatch(r"[0-9a-f]{8}", i) for i in ids)
    assert len(set(ids)) == len(ids)
    assert entries[0]["type"] == "model_change" and entries[0]["parentId"] is None
    assert entries[1]["type"] == "thinking_level_change" and entries[1]["parentId"] == entries[0]["id"]
    seen: set[str] = set()
    stamps = [objs[0]["timestamp"]] + [e["timestamp"] for e in entries]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", s) for s in stamps)
    leaf = None
    for e in entries:
        if e is not entries[0]:
            assert e["parentId"] in seen  # parents come first
        if e["type"] == "branch_summary":
            assert e["fromId"] == e["parentId"] and e["fromHook"] is False
            assert e["summary"].startswith("The user explored a different conversation branch")
            assert set(e["details"]) == {"readFiles", "modifiedFiles"}
        elif e is not entries[0] and e["parentId"] != leaf:
            # a move of the leaf without summary: the new position is on the current branch
            assert e["parentId"] in _branch(entries, leaf)
        seen.add(e["id"])
        leaf = e["id"]
        if e["type"] == "message":
            assert isinstance(e["message"]["timestamp"], int)


def _branch(entries: list[dict], leaf: str | None) -> list[str]:
    parent = {e["id"]: e["parentId"] for e in entries}
    out = []
    while leaf is not None:
        out.append(leaf)
        leaf = parent[leaf]
    return out


def test_features_present(rich: Path) -> None:
    entries = _objs(rich)[1:]
    types = Counter(e["type"] for e in entries)
    roles = Counter(e["message"]["role"] for e in entries if e["type"] == "message")
    for t in ("model_change", "thinking_level_change", "compaction", "branch_summary", "label", "session_info",
              "custom", "custom_message"):
        assert types[t] >= 1, t
    assert types["compaction"] >= 2
    for r in ("user", "assistant", "toolResult", "bashExecution"):
        assert roles[r] >= 1, r
    children = Counter(e["parentId"] for e in entries)
    assert sum(1 for n in children.values() if n >= 2) >= 2  # branches
    assert any(e["type"] == "label" and "label" not in e for e in entries)  # a cleared label
    assert any(e["type"] == "label" and e.get("label") for e in entries)
    msgs = [e["message"] for e in entries if e["type"] == "message"]
    assert {m["provider"] for m in msgs if m["role"] == "assistant"} >= {"anthropic"}
    assert any(m.get("excludeFromContext") for m in msgs)
    stops = Counter(m["stopReason"] for m in msgs if m["role"] == "assistant")
    assert stops["toolUse"] and stops["stop"]
    blocks = Counter(b["type"] for m in msgs if m["role"] == "assistant" for b in m["content"])
    assert blocks["thinking"] and blocks["text"] and blocks["toolCall"]


def test_model_changes_apply(rich: Path) -> None:
    entries = _objs(rich)[1:]
    by_id = {e["id"]: e for e in entries}
    for e in entries:
        if e["type"] == "message" and e["message"]["role"] == "assistant":
            m = e["message"]
            # the closest model_change on the branch names this message's model
            node = by_id[e["parentId"]]
            while node["type"] != "model_change":
                node = by_id[node["parentId"]]
            assert (node["provider"], node["modelId"]) == (m["provider"], m["model"])
            assert MODELS[m["model"]].api == m["api"]


def test_tool_calls_have_matching_results(rich: Path) -> None:
    entries = _objs(rich)[1:]
    calls = 0
    for e in entries:
        m = e.get("message")
        if not m or m["role"] != "assistant" or m["stopReason"] != "toolUse":
            continue
        wanted = [(b["id"], b["name"]) for b in m["content"] if b["type"] == "toolCall"]
        assert wanted
        calls += len(wanted)
        kids = [c for c in entries if c["parentId"] == e["id"]]
        got = []
        while kids and kids[0]["type"] == "message" and kids[0]["message"]["role"] == "toolResult":
            r = kids[0]["message"]
            got.append((r["toolCallId"], r["toolName"]))
            assert isinstance(r["isError"], bool) and r["content"][0]["type"] == "text"
            kids = [c for c in entries if c["parentId"] == kids[0]["id"]]
        assert got == wanted
        for b in m["content"]:
            if b["type"] == "toolCall":
                args = b["arguments"]
                key = {"read": "path", "bash": "command", "edit": "oldText", "write": "content",
                       "grep": "pattern", "ls": "path"}[b["name"]]
                assert isinstance(args[key], str) and args[key]
    assert calls > 20


def test_compactions_keep_a_user_message_on_their_branch(rich: Path) -> None:
    for path in _generated_files(rich):
        entries = _objs(path)[1:]
        by_id = {e["id"]: e for e in entries}
        for c in (e for e in entries if e["type"] == "compaction"):
            branch = _branch(entries, c["parentId"])
            assert c["firstKeptEntryId"] in branch
            kept = by_id[c["firstKeptEntryId"]]
            assert kept["type"] == "message" and kept["message"]["role"] == "user"
            assert c["fromHook"] is False and c["tokensBefore"] > 0
            assert set(c["details"]) == {"readFiles", "modifiedFiles"}
            assert c["details"]["readFiles"] == sorted(c["details"]["readFiles"])
            assert not set(c["details"]["readFiles"]) & set(c["details"]["modifiedFiles"])


def test_usage_drops_after_compaction(rich: Path) -> None:
    entries = _objs(rich)[1:]
    by_id = {e["id"]: e for e in entries}
    checked = 0
    for e in entries:
        m = e.get("message")
        if not m or m["role"] != "assistant" or m["stopReason"] in ("aborted", "error"):
            continue
        # first valid assistant after a compaction on its branch: prompt below tokensBefore
        node = by_id[e["parentId"]]
        while node["type"] != "compaction" and not (node["type"] == "message" and node["message"]["role"] == "assistant"
                                                     and node["message"]["stopReason"] not in ("aborted", "error")):
            if node["parentId"] is None:
                break
            node = by_id[node["parentId"]]
        if node["type"] == "compaction":
            u = m["usage"]
            assert u["input"] + u["cacheRead"] + u["cacheWrite"] < node["tokensBefore"]
            checked += 1
    assert checked >= 2


def test_usage_arithmetic(rich: Path) -> None:
    for path in _generated_files(rich):
        for e in _objs(path)[1:]:
            m = e.get("message")
            if not m or m["role"] != "assistant":
                continue
            u, c = m["usage"], m["usage"]["cost"]
            keys = ["input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost"]
            assert list(u)[:6] == keys and set(list(u)[6:]) <= {"cacheWrite1h", "reasoning"}  # (pi 1.6)
            assert u.get("reasoning", 0) <= u["output"] and u.get("cacheWrite1h", 0) <= u["cacheWrite"]
            assert u["totalTokens"] == u["input"] + u["output"] + u["cacheRead"] + u["cacheWrite"]
            assert c["total"] == c["input"] + c["output"] + c["cacheRead"] + c["cacheWrite"]
            spec = MODELS[m["model"]]
            assert c["input"] == pytest.approx(spec.input * u["input"] / 1e6)
            assert c["output"] == pytest.approx(spec.output * u["output"] / 1e6)
            assert c["cacheRead"] == pytest.approx(spec.cache_read * u["cacheRead"] / 1e6)
            assert c["cacheWrite"] == pytest.approx(spec.cache_write * u["cacheWrite"] / 1e6)
            if m["stopReason"] in ("aborted", "error"):
                assert u["totalTokens"] == 0 and m["errorMessage"]
                continue
            assert min(u["input"], u["output"], u["cacheRead"], u["cacheWrite"]) >= 0 and u["output"] > 0
            if spec.provider != "anthropic":
                assert u["cacheWrite"] == 0


def test_usage_grows_with_context(rich: Path) -> None:
    entries = _objs(rich)[1:]
    by_id = {e["id"]: e for e in entries}
    grew = 0
    for e in entries:
        m = e.get("message")
        if not m or m["role"] != "toolResult":
            continue
        # the call after a tool result: its prompt is at least the previous call's prompt
        prev = by_id[e["parentId"]]
        while prev["type"] == "message" and prev["message"]["role"] == "toolResult":
            prev = by_id[prev["parentId"]]
        nxt = [c for c in entries if c["parentId"] == e["id"] and c["type"] == "message"
               and c["message"]["role"] == "assistant" and c["message"]["stopReason"] not in ("aborted", "error")]
        for c in nxt:
            p0, p1 = prev["message"]["usage"], c["message"]["usage"]
            if p0["totalTokens"] and p1["cacheRead"]:
                assert p1["input"] + p1["cacheRead"] + p1["cacheWrite"] > p0["input"] + p0["cacheRead"] + p0["cacheWrite"]
                grew += 1
    assert grew > 10


def test_message_objects_round_trip(rich: Path) -> None:
    sf = read_session(rich, on_bad_lines="raise")
    assistants = [e.message for e in sf.entries if isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage)]
    assert assistants and all(a.usage is not None and a.usage.cost is not None for a in assistants)


def test_corpus_size_and_layout(tmp_path: Path) -> None:
    target = 3_000_000
    paths = generate_corpus(tmp_path, n_sessions=12, target_bytes=target, seed=4)
    assert len(paths) == 12 and len(set(paths)) == 12
    total = sum(p.stat().st_size for p in paths)
    assert 0.85 * target <= total <= 1.15 * target
    folders = {p.parent.name for p in paths}
    assert len(folders) >= 2
    for p in paths:
        assert p.parent.parent == tmp_path
        header = json.loads(p.read_text(encoding="utf-8").split("\n", 1)[0])
        assert p.parent.name == encode_cwd(header["cwd"])
        assert p.name == session_file_name(header["timestamp"], header["id"])


def test_corpus_is_deterministic(tmp_path: Path) -> None:
    a = generate_corpus(tmp_path / "a", n_sessions=3, target_bytes=300_000, seed=9)
    b = generate_corpus(tmp_path / "b", n_sessions=3, target_bytes=300_000, seed=9)
    assert [p.relative_to(tmp_path / "a") for p in a] == [p.relative_to(tmp_path / "b") for p in b]
    assert [p.read_bytes() for p in a] == [p.read_bytes() for p in b]


def test_unknown_model_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown model"):
        generate_session(tmp_path, seed=1, turns=1, models=["gpt-2"])


def test_data_sessions_are_up_to_date(tmp_path: Path) -> None:
    """data/sessions is what data/make_sessions.py writes (regenerate with that script)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_sessions", ROOT / "data" / "make_sessions.py")
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    mod.OUT = tmp_path / "sessions"
    made = {p.relative_to(mod.OUT): p.read_bytes() for p in mod.main()}
    have = {p.relative_to(ROOT / "data" / "sessions"): p.read_bytes()
            for p in (ROOT / "data" / "sessions").rglob("*.jsonl")}
    assert made == have
    assert all(50_000 <= len(b) <= 400_000 for b in have.values())


def test_a_config_and_keywords_write_the_same_session(tmp_path) -> None:
    from sessionlab import SynthConfig

    cfg = SynthConfig(turns=6, branch_prob=0.4, pi="0.58", label_prob=0.3)
    a = generate_session(tmp_path / "a.jsonl", seed=3, turns=6, branch_prob=0.4, pi="0.58", label_prob=0.3)
    b = generate_session(tmp_path / "b.jsonl", seed=3, config=cfg)
    c = generate_session(tmp_path / "c.jsonl", seed=3, config=SynthConfig(turns=6, pi="0.58", label_prob=0.3),
                         branch_prob=0.4)  # a keyword overrides the config's field
    assert a.read_bytes() == b.read_bytes() == c.read_bytes()
    with pytest.raises(TypeError):
        generate_session(tmp_path, seed=3, turnz=2)


@pytest.mark.parametrize("seed", [29, 1234, 4711])
def test_generated_usage_is_never_negative(tmp_path, seed):
    # a compaction after a context edit once counted the kept messages at their pre-edit size
    # (seed 29 wrote input: -1893); every usage field must stay a count of tokens
    path = generate_session(tmp_path, seed=seed, turns=12, branch_prob=0.2, compaction_window=20_000)
    fields = 0
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        usage = (entry.get("message") or {}).get("usage") or entry.get("usage") or {}
        for key in ("input", "output", "cacheRead", "cacheWrite", "totalTokens"):
            if key in usage:
                assert usage[key] >= 0, (entry["id"], key, usage[key])
                fields += 1
    assert fields > 50
