"""Agents are a seam: a toy agent added in a few dozen lines gets every table and report.

Nothing outside this file knows the toy format: the registry (``sessionlab.agents``) hands its
files to the toy reader, and the facts, usage reports, contexts, the CLI and the report follow
from the columns the reader fills.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sessionlab as sl
from sessionlab import agents
from sessionlab.cli import main

# -- the toy agent: lines {"toy": 1, "id", "parent", "ts", "kind": "q" | "a" | "note", ...} -------


def read_toy(path: str, fh) -> agents.AgentFile:
    af = agents.AgentFile(path=path, agent="toy")
    cols: dict[str, list] = {k: [] for k in ("line_no", "entry_id", "parent_id", "type", "role", "timestamps",
                                             "model", "input_tokens", "output_tokens", "side_node", "est_tokens")}
    for line_no, raw in enumerate(fh.read().splitlines(), 1):
        d = json.loads(raw)
        if d.get("kind") == "meta":
            af.session = {"session_id": d["session"], "cwd": d.get("cwd"), "name": d.get("title")}
            continue
        answer = d["kind"] == "a"
        for k, v in (("line_no", line_no), ("entry_id", d["id"]), ("parent_id", d.get("parent")),
                     ("type", "note" if d["kind"] == "note" else "message"),
                     ("role", {"q": "user", "a": "assistant"}.get(d["kind"])), ("timestamps", d["ts"]),
                     ("model", d.get("model")), ("input_tokens", d.get("in") if answer else None),
                     ("output_tokens", d.get("out") if answer else None), ("side_node", d["kind"] == "note"),
                     ("est_tokens", -(-len(d.get("text", "")) // 4))):
            cols[k].append(v)
    af.columns, af.n = cols, len(cols["entry_id"])
    return af


TOY = agents.AgentSpec(name="toy", title="Toy", recognise=lambda obj: obj.get("toy") == 1,
                       roots=lambda: [], reader=f"{__name__}:read_toy", calls_need_usage=True, priced=True,
                       side_kinds=("note",))

# ------------------------------------------------------------------------------------------------


def _line(**d) -> str:
    return json.dumps({"toy": 1, **d}) + "\n"


@pytest.fixture
def toy(tmp_path):
    agents.register(TOY)
    path = tmp_path / "toy" / "s1.jsonl"
    path.parent.mkdir()
    path.write_text(
        _line(kind="meta", session="toy-1", cwd="/work/toy", title="Toy run", id=None, ts=None)
        + _line(kind="q", id="q1", parent=None, ts="2026-03-01T10:00:00Z", text="hello there")
        + _line(kind="note", id="n1", parent="q1", ts="2026-03-01T10:00:01Z")
        + _line(kind="a", id="a1", parent="n1", ts="2026-03-01T10:00:02Z", model="claude-sonnet-4-5", **{"in": 1000,
                                                                                                        "out": 200})
        + _line(kind="q", id="q2", parent="a1", ts="2026-03-02T09:00:00Z", text="again")
        + _line(kind="a", id="a2", parent="q2", ts="2026-03-02T09:00:05Z", model="claude-sonnet-4-5", **{"in": 3000,
                                                                                                        "out": 100})
        + _line(kind="q", id="q3", parent="a1", ts="2026-03-02T09:10:00Z", text="other branch")
        + _line(kind="note", id="n2", parent="q3", ts="2026-03-02T09:10:01Z"))
    yield path
    agents.unregister("toy")


def test_a_toy_agent_gets_every_table(toy):
    assert agents.detect(toy.read_bytes()[:65536]) == "toy" and "toy" in agents.names()
    corpus = sl.load(toy.parent, cache=False, progress=False, on_bad_lines="raise")
    [s] = corpus.sessions.to_pylist()
    assert (s["agent"], s["session_id"], s["cwd"], s["name"], s["loader"]) == ("toy", "toy-1", "/work/toy", "Toy run",
                                                                              "agent")
    # leaves: a2 and q3 (n2 is a side node); fork point: a1; the current leaf: the last conversation entry
    assert (s["call_count"], s["leaf_count"], s["fork_count"], s["leaf_id"]) == (2, 2, 1, "q3")
    assert (s["input_tokens"], s["output_tokens"]) == (4000, 300)
    assert s["cost_usd"] == pytest.approx(4000 * 3e-6 + 300 * 15e-6)  # priced: claude-sonnet-4-5's prices
    days = sl.usage_by(corpus, by="day").to_pylist()
    assert [(str(d["day"]), d["calls"], d["input_tokens"]) for d in days] == [("2026-03-01", 1, 1000),
                                                                             ("2026-03-02", 1, 3000)]
    ctx = {r["at_id"]: r for r in sl.contexts(corpus, at="calls").to_pylist()}
    assert ctx["a2"]["message_count"] == 3  # q1, a1, q2 (the note is no message)
    assert sorted(sl.contexts(corpus, at="leaves")["at_id"].to_pylist()) == ["a2", "q3"]
    assert sl.load(toy.parent, agents=["toy"], cache=False, progress=False).sessions.num_rows == 1
    assert sl.load(toy.parent, agents=["pi"], cache=False, progress=False).sessions.num_rows == 0


def test_the_cli_and_the_report_know_the_toy_agent(toy, capsys, tmp_path):
    assert main(["usage", "daily", str(toy.parent), "--agent", "toy", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [d["inputTokens"] for d in out["daily"]] == [1000, 3000]
    from sessionlab.report._data import collect

    [info] = collect(toy.parent).sessions
    assert (info.calls, info.leaves, info.forks, info.title) == (2, 2, 1, "Toy run")


def test_unknown_agents_are_refused_with_the_registry_s_names():
    with pytest.raises(sl.OptionError, match="toy2"):
        sl.load("data/", agents=["toy2"])
    with pytest.raises(sl.ArgumentTypeError):
        agents.register("toy")  # type: ignore[arg-type]


def test_docs_list_every_registered_agent():
    doc = (Path(__file__).resolve().parent.parent / "docs" / "agents.md").read_text()
    table = doc.split("<!-- registry: generated by sessionlab.agents.markdown() -->\n")[1].split("<!-- /registry")[0]
    assert table == agents.markdown()
    for name in agents.names():
        assert f"`{name}`" in table


FIRST_LINES = [
    b'{"type":"session","version":3,"id":"s","cwd":"/w","timestamp":"2026-01-01T00:00:00Z"}',
    b'{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"x"}}',
    b'{"uuid":"a","parentUuid":null,"sessionId":"s","type":"user","message":{"role":"user","parts":[]}}',
    b'{"uuid":"a","sessionId":"s","type":"user","message":{"role":"user","content":"hi"},"cwd":"/w"}',
    b'{"type":"session","version":3,"id":"s","n":NaN}',  # (NaN: msgspec refuses, json reads it)
    b'{"type":"session","version":3,"id":"s","n":1e400}',
    b'{"type":"session","version":3,"id":"s","n":123456789012345678901234567890}',
    b'{"type":"session","id":"\\ud800","version":3}',  # (a lone surrogate escape)
    b'{"type":"x","type":"session","version":3,"id":"s"}',  # (a repeated key: the last counts)
    b'{"type":"session","version":3,"id":"\xff\xfe"}',  # (not UTF-8)
    b'{"type": "session_meta", "payload": {}, "timestamp": "2026-01-01T00:00:00Z"}',
    b'{"resource":{},"type":"span","traceId":"t","attributes":{}}',
    b'{broken',
]


@pytest.mark.parametrize("line", FIRST_LINES)
def test_detection_is_the_same_whichever_decoder_parses_the_first_line(line, monkeypatch):
    from sessionlab.agents import _chain

    head = line + b"\n" + b'{"type":"message"}\n'
    monkeypatch.setattr(agents, "_first_line_loads", lambda: json.loads)
    by_json = agents.detect(head, "/x/a.jsonl")
    monkeypatch.setattr(agents, "_first_line_loads", lambda: _chain.loads)
    assert agents.detect(head, "/x/a.jsonl") == by_json


def _detect_reference(head: bytes, path: str | None) -> str:
    """:func:`agents.detect` as its docstring says it, plainly: the agents that know a file by name
    and first bytes; else the first of the first 20 complete lines that is a JSON object; else a
    first line longer than the head, or a pretty document, by its start."""
    specs = agents.specs()
    if path is not None:
        for a in specs:
            if a.recognise_file is not None and a.recognise_file(path, head):
                return a.name
    for ln in head.split(b"\n")[:-1][:20]:
        s = ln.strip()
        if not (s.startswith(b"{") and s.endswith(b"}")):
            continue
        try:
            obj = json.loads(s)
        except ValueError:
            continue
        if isinstance(obj, dict):
            known = [a.name for a in specs if a.recognise(obj)]
            if known:
                return known[0]
            break  # (an object of no known agent: its start may still be one's)
    lines = head.lstrip().split(b"\n")
    pretty = lines[0].strip() == b"{"
    if (b"\n" not in head or pretty) and re.search(rb'"type"\s*:\s*"', head[:4096]):
        return next((a.name for a in specs if a.recognise_start is not None and a.recognise_start(head[:4096])), "pi")
    return "pi"


_PIECES = [*FIRST_LINES[:4], FIRST_LINES[11], b"{", b"}", b"  {", b"  },", b'  "type": "session",', b'  "type": "user",',
           b'  "id": "T-3b1f2c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d",', b'  "messages": [', b'  "sessionId": "s",',
           b'  "projectHash": "h",', b"   " + FIRST_LINES[2] + b" \t", b"\t" + FIRST_LINES[1] + b"\r", b"\x0b{}\x0c",
           b"[1]", b"", b" ", b'{"a": 1} x']


@given(lines=st.lists(st.sampled_from(_PIECES), max_size=30), ends=st.booleans(), lead=st.sampled_from([b"", b"\n "]),
       path=st.sampled_from([None, "/x/a.jsonl", "/x/T-1.json"]))
@settings(max_examples=400, deadline=None)
def test_detection_is_its_plain_definition(lines, ends, lead, path):
    head = lead + b"\n".join(lines) + (b"\n" if ends else b"")
    assert agents.detect(head, path) == _detect_reference(head, path)


@pytest.mark.parametrize(("before", "agent"), [(19, "codex"), (20, "pi")])
def test_detection_reads_the_first_twenty_lines(before, agent):
    head = b"x\n" * before + FIRST_LINES[1] + b"\n"
    assert agents.detect(head, "/x/a.jsonl") == _detect_reference(head, "/x/a.jsonl") == agent
