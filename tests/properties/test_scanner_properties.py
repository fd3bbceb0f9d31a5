"""Properties of the native scanner: on mutated, random and rewritten files, native on and off agree."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests._native_cases import (
    ACCEPTED,
    BASIC,
    GENERATED,
    HEADER,
    SLOW_ARGS,
    START,
    _accepts_fast,
    _scan,
    assert_native_agrees,
    call,
    js,
    needs_scan,
    scan,
)

# ------------------------------------------------------------------ 6. properties

SMALLEST_GENERATED = min(GENERATED, key=lambda p: (p.stat().st_size, p.name))
SEEDS = [
    SMALLEST_GENERATED.read_bytes(),
    BASIC,
    ACCEPTED["escaped_ids"] + ACCEPTED["usage_variants"].split(b"\n", 3)[3],
    ACCEPTED["args_floats"],
    ACCEPTED["compaction_and_branch_entries"],
    ACCEPTED["bash_and_summaries"],
    ACCEPTED["images"],
    ACCEPTED["pi16_usage_entries"],
    ACCEPTED["pi16_assistant_fields"],
    ACCEPTED["pi16_system_messages"],
    ACCEPTED["pi16_context_edits"],
]
INSERTS = [b'"', b"\\", b"{", b"}", b"[", b"]", b",", b":", b" ", b"\t", b"\r", b"\n", b"\r\n", b"0", b"-", b"1e5", b".5",
           b"null", b"true", b"\x00", b"\x80", b"\xff", b"\xc3", b"\xed\xa0\x80", "é".encode(), "😀".encode(), b"\\n", b"\\u00e9",
           b"\\ud83d\\ude00", b"\\ud800", b"\\udc00", b"\\u0000", b"\\/", b'\\"', b"\\x", b"\xef\xbb\xbf",
           b'"id":"e1",', b'"parentId":"e1",', b'"parent_id":null,', b'"type":"leaf",', b'"retainedTail":[],',
           b'"isError":"x",', b'"input":1.5,', b'"input":99999999999999999999,', b'"arguments":{"a":1.5},', b'"x":[[[[[[[]]]]]]],',
           b'"role":"user",', b'"content":[{"type":"toolCall","name":"n","id":"i"}],',
           b'"type":"usage",', b'"type":"context_edit",', b'"role":"system",', b'"usage":{"input":1,"reasoning":2},',
           b'"usage":null,', b'"kind":"title",', b'"model":"m",', b'"responseModel":"r",', b'"reasoning":1.5,',
           b'"cacheWrite1h":"x",', b'"targetId":"e1",', b'"replacement":null,', b'"content":[{"type":"image"}],']


@st.composite
def mutated_files(draw) -> bytes:
    data = bytearray(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "set", "insert", "insert_in_string", "delete", "truncate", "dup_line",
                                   "swap_lines", "drop_line", "number"]))
        n = len(data)
        pos = draw(st.integers(0, max(n - 1, 0)))
        if op == "flip" and n:
            data[pos] ^= draw(st.integers(1, 255))
        elif op == "set" and n:
            data[pos] = draw(st.sampled_from(b'"\\{}[],:0123456789-+.eE \t\r\nntfu\x00\x7f\x80\xff'))
        elif op == "insert":
            data[pos:pos] = draw(st.sampled_from(INSERTS) | st.binary(min_size=1, max_size=6))
        elif op == "insert_in_string":
            quotes = [i for i, c in enumerate(data) if c == 34]
            if quotes:
                at = draw(st.sampled_from(quotes)) + 1
                data[at:at] = draw(st.sampled_from(INSERTS) | st.text(min_size=1, max_size=4).map(str.encode))
        elif op == "delete":
            data[pos:pos + draw(st.integers(1, 20))] = b""
        elif op == "truncate":
            del data[pos:]
        elif op in ("dup_line", "swap_lines", "drop_line"):
            lines = bytes(data).split(b"\n")
            i = draw(st.integers(0, len(lines) - 1))
            j = draw(st.integers(0, len(lines) - 1))
            if op == "dup_line":
                lines.insert(j, lines[i])
            elif op == "swap_lines":
                lines[i], lines[j] = lines[j], lines[i]
            else:
                del lines[i]
            data = bytearray(b"\n".join(lines))
        elif op == "number":
            digits = [i for i, c in enumerate(data) if 48 <= c <= 57]
            if digits:
                at = draw(st.sampled_from(digits))
                end = at
                while end < len(data) and 48 <= data[end] <= 57:
                    end += 1
                data[at:end] = draw(st.sampled_from([b"0", b"-0", b"1.5", b"1e3", b"18446744073709551616", b"1E400",
                                                     b"999999999999999999", b"9223372036854775807", b"00", b"1E-400"]))
    return bytes(data)


def _agree_on(data: bytes, with_neighbours: bool = True) -> None:
    """Native on and off agree on ``data``, alone and between two clean files (one native batch)."""
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "b.jsonl"
        f.write_bytes(data)
        assert_native_agrees(f)
        if with_neighbours:
            (Path(d) / "a.jsonl").write_bytes(BASIC)
            (Path(d) / "c.jsonl").write_bytes(SLOW_ARGS)
            assert_native_agrees(d)


@needs_scan
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_files())
def test_mutated_files_native_on_and_off_agree(data):
    """Random damage to valid files: the scanner refuses or gives exactly what the other paths give."""
    _agree_on(data)


ROLES = ["user", "assistant", "toolResult", "custom", "bashExecution", "branchSummary", "compactionSummary", "hookMessage", None,
         "system"]
TYPES = ["message", "message", "message", "thinking_level_change", "model_change", "compaction", "branch_summary", "custom",
         "custom_message", "label", "session_info", "usage", "context_edit"]
SCALARS = (st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.integers(-5, 5)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=6))
ANY_JSON = st.recursive(SCALARS, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=3), c, max_size=3),
                        max_leaves=8)


def _maybe(value_strategy):
    """A value of the expected type most of the time (59 in 60), anything JSON sometimes."""
    return st.sampled_from([False] * 59 + [True]).flatmap(lambda odd: ANY_JSON if odd else value_strategy)


@st.composite
def json_blocks(draw):
    b = {"type": draw(_maybe(st.sampled_from(["text", "thinking", "toolCall", "image", "other"])))}
    for key, strat in [("text", st.text(max_size=8)), ("thinking", st.text(max_size=8)), ("name", st.text(max_size=5)),
                       ("id", st.text(max_size=5)), ("arguments", ANY_JSON), ("data", st.text(max_size=4))]:
        if draw(st.booleans()):
            b[key] = draw(_maybe(strat))
    return b


@st.composite
def json_entries(draw, n_ids: int):
    ids = [f"e{i}" for i in range(n_ids)] + ["sess-0001", "x"]
    e = {"type": draw(st.sampled_from(TYPES * 10 + ["leaf", "session", "zzz"]))}
    if draw(st.integers(0, 9)):
        e["id"] = draw(_maybe(st.sampled_from(ids)))
    if draw(st.integers(0, 9)):
        e["parentId"] = draw(_maybe(st.none() | st.sampled_from(ids)))
    e["timestamp"] = draw(_maybe(st.just("2026-01-05T10:00:00.000Z")))
    content = st.text(max_size=10) | st.lists(json_blocks(), max_size=4) | st.none()
    m: dict = {"role": draw(_maybe(st.sampled_from(ROLES)))}
    usage = st.fixed_dictionaries({}, optional={
        k: _maybe(st.integers(-(10**18) + 1, 10**18 - 1) | st.integers(0, 1000))
        for k in ("input", "output", "cacheRead", "cacheWrite", "totalTokens", "reasoning", "cacheWrite1h")} | {
        "cost": _maybe(st.fixed_dictionaries({}, optional={"total": _maybe(st.floats(allow_nan=False, allow_infinity=False))}))})
    for key, strat in [("content", content), ("usage", usage), ("isError", st.booleans() | st.none()),
                       ("toolName", st.text(max_size=4)), ("customType", st.text(max_size=4)), ("command", st.text(max_size=6)),
                       ("output", st.text(max_size=6)), ("summary", st.text(max_size=6)), ("model", st.text(max_size=4)),
                       ("provider", st.text(max_size=4)), ("api", st.text(max_size=4)), ("stopReason", st.text(max_size=4)),
                       ("errorMessage", st.text(max_size=4)), ("responseModel", st.text(max_size=4)),
                       ("sections", st.dictionaries(st.text(max_size=3), st.text(max_size=4) | st.none(), max_size=2)),
                       ("toolsAdded", st.lists(st.fixed_dictionaries({"name": st.text(max_size=3)}), max_size=2))]:
        if draw(st.booleans()):
            m[key] = draw(_maybe(strat))
    if e["type"] == "message" or draw(st.integers(0, 5)) == 0:
        e["message"] = draw(st.just(m) | st.none()) if draw(st.integers(0, 9)) else draw(ANY_JSON)
    for key, strat in [("summary", st.text(max_size=6)), ("name", st.text(max_size=4)), ("label", st.text(max_size=4)),
                       ("targetId", st.sampled_from(ids)), ("fromId", st.sampled_from(ids)), ("customType", st.text(max_size=4)),
                       ("thinkingLevel", st.text(max_size=4)), ("provider", st.text(max_size=4)), ("modelId", st.text(max_size=4)),
                       ("firstKeptEntryId", st.sampled_from(ids)), ("tokensBefore", st.integers(-(10**19), 10**19)),
                       ("content", content), ("retainedTail", st.none()), ("extra", ANY_JSON), ("usage", usage),
                       ("kind", st.text(max_size=4)), ("model", st.text(max_size=4)),
                       ("replacement", st.none() | st.fixed_dictionaries({"content": content}))]:
        if draw(st.integers(0, 3)) == 0:
            e[key] = draw(_maybe(strat))
    return e


@st.composite
def json_files(draw) -> bytes:
    n = draw(st.integers(0, 8))
    entries = [draw(json_entries(n)) for _ in range(n)]
    for i, e in enumerate(entries):  # mostly a valid chain, so the scanner gets past the tree checks
        if draw(st.integers(0, 4)):
            e["id"] = f"e{i}"
            e["parentId"] = f"e{i - 1}" if i and draw(st.integers(0, 3)) else None
    header = draw(st.sampled_from([HEADER] * 8 + [HEADER | {"version": 2}, HEADER | {"extra": [1], "parentSession": "p"}]))
    ascii = draw(st.booleans())
    lines = [js(header, ascii)] + [js(e, ascii) for e in entries]
    return b"\n".join(lines) + draw(st.sampled_from([b"\n", b""]))


@needs_scan
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_files())
def test_random_pi_like_files_native_on_and_off_agree(data):
    """Well-formed JSON lines with pi's keys holding values of any type: refused or identical tables."""
    _agree_on(data, with_neighbours=False)


_KEEP = {"type", "id", "parentId", "role", "version", "fromId", "targetId", "firstKeptEntryId"}  # the tree and the kinds
SEPARATORS = [(",", ":"), (", ", ": "), (" ,\t", " :  ")]


@st.composite
def rewritten_files(draw) -> bytes:
    """A clean file with new values of the same JSON types (any text, integers, floats, tool-call
    arguments of any shape), written back with or without escapes, spaces, CRLF and blank lines:
    files the scanner should mostly accept, exercising its character counts and copies."""
    objs = [json.loads(line) for line in draw(st.sampled_from(SEEDS)).splitlines() if line.strip()]

    def new(key, v):
        if key == "arguments" and draw(st.integers(0, 2)) == 0:
            return draw(ANY_JSON)
        if isinstance(v, dict):
            return {k: new(k, x) for k, x in v.items()}
        if isinstance(v, list):
            return [new(key, x) for x in v]
        if key in _KEEP or isinstance(v, bool) or v is None or draw(st.integers(0, 3)):
            return v
        if isinstance(v, str):
            return draw(st.text(max_size=12))
        if isinstance(v, int):
            return draw(st.integers(-(10**18) + 1, 10**18 - 1) | st.integers(0, 100))
        return draw(st.floats(allow_nan=False, allow_infinity=False))

    lines = []
    for o in objs:
        line = js(new(None, o), ascii=draw(st.booleans()), separators=draw(st.sampled_from(SEPARATORS)))
        if draw(st.integers(0, 5)) == 0:
            line = line.replace(b"/", b"\\/")
        lines.append(line + draw(st.sampled_from([b"", b"", b"", b"\r"])))
        if draw(st.integers(0, 9)) == 0:
            lines.append(draw(st.sampled_from([b"", b"\r"])))
    return b"\n".join(lines) + draw(st.sampled_from([b"\n", b"\r\n", b""]))


@needs_scan
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rewritten_files())
def test_rewritten_files_native_on_and_off_agree(data):
    """Clean files with random values of the right types: the scanner's counts equal Python's."""
    _agree_on(data)


def _check_scanner_on(data: bytes) -> None:
    sc = _scan.Scanner(True)
    info = sc.add(data)
    assert isinstance(info, (str, tuple))
    out = sc.finish()
    if isinstance(info, str):
        assert out["rows"] == 0 and out["block_rows"] == 0 and out["slow"] == b"" and out["slow_bytes"] == b""
    else:
        assert (out["rows"], out["block_rows"]) == info[:2]
    for specs, rows in ((out["entries"], out["rows"]), (out["blocks"], out["block_rows"])):
        assert all(len(spec[-1]) == rows for spec in specs)  # one validity byte per row


@needs_scan
@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=3000) | st.text(max_size=500).map(str.encode)
       | st.text(alphabet='{}[]":,\\ \t\r\n0123456789-.eEnulltrufasebdxy', max_size=400).map(str.encode))
def test_scanner_survives_random_bytes(data):
    """Any bytes: add() returns a reason or a tuple, never crashes, and a refusal keeps no row."""
    _check_scanner_on(data)
    _check_scanner_on(js(HEADER) + b"\n" + data)
    _check_scanner_on(js(HEADER) + b"\n" + js(START[0] | {"id": "m", "parentId": None}) + b"\n" + data)


@needs_scan
@settings(max_examples=200, deadline=None)
@given(ANY_JSON, st.sampled_from(["x", "message", "content", "usage", "arguments", "retainedTail", "id", "parentId"]))
def test_scanner_survives_random_json_values(value, where):
    """Any JSON value in any known place: a reason or a tuple, never a crash."""
    e = {"type": "message", "id": "m", "parentId": None,
         "message": {"role": "assistant", "content": [call({"a": 1})], "usage": {"input": 1}}}
    if where in ("content", "usage"):
        e["message"][where] = value
    elif where == "arguments":
        e["message"]["content"][0]["arguments"] = value
    else:
        e[where] = value
    _check_scanner_on(js(HEADER) + b"\n" + js(e) + b"\n")
    _check_scanner_on(js(HEADER, ascii=True) + b"\n" + js(e, ascii=True) + b"\n")


def test_property_seeds_are_clean():
    """The mutation seeds are clean files both fast paths accept."""
    for data in SEEDS:
        assert _accepts_fast(data)
        if _scan is not None:
            assert isinstance(scan(data), tuple)
