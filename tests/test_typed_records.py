"""``Chain.typed_records`` (a reader's records decoded into a Struct of the keys it uses) against
``Chain.records`` (every line decoded whole): the same lines, the same values of those keys, the
same issues, on any mix of good and broken lines."""

from __future__ import annotations

import io

from hypothesis import given, settings
from hypothesis import strategies as st

from sessionlab.agents._chain import Chain, record_type
from sessionlab.agents._qwen_reader import read_qwen
from sessionlab.agents._spec import reading_spend_only

KEYS = ("type", "usage", "id")
Rec = record_type("Rec", KEYS)

LINES = [
    b'{"type":"a","usage":{"n":1},"id":"x","message":{"parts":[{"text":"hi"}]}}',
    b'{"type":"b","id":2}',
    b'{"type":"dup","type":"last","other":[1,2,{"k":null}]}',
    '{"type":"caf\u00e9","message":"\u2026"}'.encode(),
    b'{"type":"esc","message":"\\u00e9\\ud83d\\ude00"}',
    b'{"type":"lone","message":"\\ud800"}',  # (a lone surrogate: json takes it, msgspec does not)
    b'{"usage":1e400}',  # (a number past a double, in a key read: json makes it inf)
    b'{"type":"big","message":1e400}',  # (... and in a key not read)
    b'{"id":123456789012345678901234567890123}',
    b'{"type":"nan","usage":NaN}',
    b'{"type":"bad utf8","message":"\xff\xfe"}',  # (no UTF-8: msgspec skips it unchecked)
    b'{"type":"broken",',
    b'[1,2,3]',
    b'"just a string"',
    b'',
    b'   ',
    b'\t',
    b'{}',
    b'{"type":null,"usage":[],"id":{"a":1}}',
    b'\xef\xbb\xbf{"type":"bom"}',
]
ENDINGS = [b"\n", b"\r\n", b"\r"]


def _plain(data: bytes) -> tuple[list, list]:
    chain = Chain("f.jsonl", "qwen")
    got = [(n, repr({k: d.get(k) for k in KEYS})) for n, d in chain.records(data)]
    return got, chain.out.issues


def _typed(data: bytes) -> tuple[list, list]:
    chain = Chain("f.jsonl", "qwen")
    got = [(n, repr({k: getattr(d, k) for k in KEYS})) for n, d in chain.typed_records(data, Rec)]
    return got, chain.out.issues


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(LINES), st.sampled_from(ENDINGS)), max_size=12), st.booleans())
def test_typed_records_read_every_line_as_records_does(lines, last_newline):
    data = b"".join(line + end for line, end in lines)
    if lines and not last_newline:
        data = data[: -len(lines[-1][1])]
    assert _typed(data) == _plain(data)


def test_a_file_of_objects_alone_is_decoded_at_once_with_its_line_numbers():
    data = b'{"type":"a"}\n{"id":"b"}\n{"type":"c"}'
    got, issues = _typed(data)
    assert [n for n, _ in got] == [1, 2, 3] and not issues
    # a blank line between them: the same numbers as line by line
    assert _typed(data.replace(b"\n", b"\n\n", 1)) == _plain(data.replace(b"\n", b"\n\n", 1))
    assert [n for n, _ in _typed(data.replace(b"\n", b"\n\n", 1))[0]] == [1, 3, 4]


def test_qwen_spend_and_full_reads_agree_on_the_calls():
    data = (b'{"uuid":"u1","parentUuid":null,"sessionId":"s","type":"user","cwd":"/w","version":"1",'
            b'"message":{"role":"user","parts":[{"text":"hi"}]}}\n'
            b'{"uuid":"u2","parentUuid":"u1","sessionId":"s","type":"assistant","model":"qwen3-coder-plus",'
            b'"message":{"role":"model","parts":[{"text":"ok"}]},"usageMetadata":{"promptTokenCount":100,'
            b'"candidatesTokenCount":20,"cachedContentTokenCount":40,"thoughtsTokenCount":5}}\n'
            b'{"uuid":"u3","parentUuid":"u2","sessionId":"s","type":"system","subtype":"custom_title",'
            b'"systemPayload":{"customTitle":"named"}}\n'
            b'{"uuid":"u4","parentUuid":"u3","sessionId":"s","type":"system","subtype":"custom_title",'
            b'"systemPayload":"not an object"}\n')
    full = read_qwen("s.jsonl", io.BytesIO(data))
    with reading_spend_only(True):
        spend = read_qwen("s.jsonl", io.BytesIO(data))
    names = list(full.row_names)
    spend_cols = ("line_no", "entry_id", "parent_id", "model", "input_tokens", "output_tokens", "cache_read_tokens",
                  "cache_write_tokens", "reasoning_tokens", "total_tokens", "cost_usd")

    def cut(rows: list) -> list[dict]:
        return [{k: v for k, v in zip(names, r) if k in spend_cols} for r in rows]

    calls = [r for r in cut(full.rows) if r["input_tokens"] is not None]
    assert cut(spend.rows) == calls
    (call,) = calls
    assert (call["input_tokens"], call["cache_read_tokens"], call["output_tokens"], call["reasoning_tokens"]) == (
        60, 40, 20, 5)
    assert full.session["name"] == spend.session["name"] == "named"
    assert full.session["cwd"] == "/w" and full.session["agent_version"] == "1"


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.dictionaries(st.sampled_from(["a", "b", "c"]), st.one_of(
    st.integers(-10**20, 10**20), st.floats(allow_nan=True), st.booleans(), st.none(), st.text(max_size=3),
    st.lists(st.integers(), max_size=2))), st.integers(), st.none(), st.lists(st.integers(), max_size=2)))
def test_counts_of_is_count_of_of_each_key(d):
    from sessionlab.agents._chain import count_of, counts_of

    keys = ("a", "b", "c", "a")
    assert counts_of(d, keys) == [count_of(d, k) for k in keys]


def test_a_count_past_a_double_is_no_count_and_the_file_still_reads():
    """``1e400`` (json reads it as infinity, msgspec refuses it): the line is read line by line, its
    count taken as none, the file's other calls kept (it failed the whole file before)."""
    from sessionlab.agents._chain import count_of

    assert count_of({"a": float("inf"), "b": 7}, "a", "b") == 7 and count_of({"a": float("nan")}, "a") == 0
    data = (b'{"uuid":"u1","sessionId":"s","type":"assistant","model":"m","usageMetadata":'
            b'{"promptTokenCount":1e400,"candidatesTokenCount":5}}\n'
            b'{"uuid":"u2","parentUuid":"u1","sessionId":"s","type":"assistant","model":"m","usageMetadata":'
            b'{"promptTokenCount":10,"candidatesTokenCount":2}}\n')
    with reading_spend_only(True):
        af = read_qwen("s.jsonl", io.BytesIO(data))
    rows = [dict(zip(af.row_names, r)) for r in af.rows]
    assert not af.issues and [(r["input_tokens"], r["output_tokens"]) for r in rows] == [(0, 5), (10, 2)]
