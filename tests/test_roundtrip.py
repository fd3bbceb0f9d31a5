"""Round trips: file -> objects -> file byte for byte, both dialects, and random entries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionlab._jsjson import js_parse, js_stringify
from sessionlab.pi.io import (
    entry_from_dict,
    entry_to_dict,
    header_from_dict,
    header_to_dict,
    read_session,
    to_line,
    write_session,
)
from sessionlab.pi.io.reader import SessionFile
from sessionlab.pi.model import (
    ActiveToolsChangeEntry,
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryEntry,
    BranchSummaryMessage,
    CompactionEntry,
    CompactionSummaryMessage,
    Cost,
    CustomEntry,
    CustomMessage,
    CustomMessageEntry,
    ImageContent,
    LabelEntry,
    LeafEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionHeader,
    SessionInfoEntry,
    TextContent,
    ThinkingContent,
    ThinkingLevelChangeEntry,
    ToolCall,
    ToolResultMessage,
    UnknownContent,
    UnknownEntry,
    UnknownMessage,
    Usage,
    UserMessage,
)

BAD_LINE_KINDS = {"invalid_json", "truncated_last_line", "not_an_object"}


def read(p: Path):
    return read_session(p, on_bad_lines="skip")


def expected_rewrite(data: bytes, bad: set[int]) -> bytes:
    """The file's lines minus the given (1-based) bad lines and minus blank lines."""
    pieces = data.split(b"\n")
    if data.endswith(b"\n"):
        pieces.pop()
    kept = [x for n, x in enumerate(pieces, 1) if n not in bad and x.strip()]
    return b"\n".join(kept) + b"\n"


# ---------------------------------------------------------------------------------------------
# pi's sample files


def test_sample_round_trip(sample_path, tmp_path):
    data = sample_path.read_bytes()
    sf = read(sample_path)
    out = tmp_path / "out.jsonl"
    write_session(sf, out)
    bad = {i.line for i in sf.issues if i.kind in BAD_LINE_KINDS}
    blank = {n for n, x in enumerate(data.split(b"\n")[:-1], 1) if not x.strip()}
    if bad or blank:
        assert out.read_bytes() == expected_rewrite(data, bad)
        assert out.read_bytes() != data
    else:
        assert out.read_bytes() == data  # byte for byte


@pytest.mark.parametrize(
    ("name", "bad", "blank"),
    [("synthetic-v3-malformed", {3}, {4}), ("synthetic-garbage-before-header", {1}, set())],
)
def test_malformed_samples_lose_exactly_their_bad_lines(pi_data, tmp_path, name, bad, blank):
    src = pi_data / "generated/synthetic" / f"{name}.jsonl"
    data = src.read_bytes()
    sf = read(src)
    assert {i.line for i in sf.issues if i.kind in BAD_LINE_KINDS} == bad
    out = tmp_path / "out.jsonl"
    write_session(sf, out)
    original = data.split(b"\n")[:-1]
    assert out.read_bytes().split(b"\n")[:-1] == [x for n, x in enumerate(original, 1) if n not in bad | blank]
    assert read(out).entries == sf.entries


def test_to_line_reproduces_v3_lines(sample_path):
    sf = read(sample_path)
    if sf.version != 3 or sf.dialect != "pi":
        pytest.skip("to_line only reproduces v3 files (older ones are migrated)")
    lines = sample_path.read_text(encoding="utf-8").split("\n")
    for e, n in zip(sf.entries, sf.line_numbers):
        line = to_line(e)
        if "-1.6" in str(sample_path) or "real-newer" in str(sample_path):
            # newer pi releases order some keys differently (an assistant's timestamp before its
            # errorMessage, a tool result's details last): the same object, keys in another order
            assert json.loads(line) == json.loads(lines[n - 1])
            continue
        assert line == lines[n - 1]
    if sf.header is not None:
        assert to_line(sf.header) in lines


def test_js_stringify_reproduces_every_valid_line(sample_path):
    n_valid = 0
    for line in sample_path.read_text(encoding="utf-8").split("\n"):
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        assert js_stringify(obj) == line
        n_valid += 1
    assert n_valid > 0


def test_seed_round_trip(sample_path, tmp_path):
    sf = read(sample_path)
    seed = tmp_path / "seed.jsonl"
    write_session(sf, seed, dialect="seed")
    back = read(seed)
    if sf.entries:
        assert back.dialect == "seed"
    assert back.entries == sf.entries
    assert back.header == sf.header
    pi = tmp_path / "pi.jsonl"
    write_session(back, pi, dialect="pi")
    again = read(pi)
    assert again.dialect == "pi"
    assert again.entries == sf.entries and again.header == sf.header
    # written in its own dialect, the seed file comes back byte for byte
    seed2 = tmp_path / "seed2.jsonl"
    write_session(back, seed2)
    assert seed2.read_bytes() == seed.read_bytes()


def test_seed_file_uses_snake_case(pi_data, tmp_path):
    src = pi_data / "generated/sessions/--home-user-proj--/" \
        "2026-01-15T10-00-01-000Z_00000001-0000-4000-8000-000000000000.jsonl"
    seed = tmp_path / "seed.jsonl"
    write_session(read(src), seed, dialect="seed")
    text = seed.read_text(encoding="utf-8")
    assert '"parent_id":' in text and '"parentId":' not in text
    assert '"stop_reason":' in text and '"stopReason":' not in text


# ---------------------------------------------------------------------------------------------
# files built in tmp_path: BOM, CRLF, no final newline


def _variants(data: bytes) -> dict[str, bytes]:
    crlf = data.replace(b"\n", b"\r\n")
    return {
        "bom": b"\xef\xbb\xbf" + data,
        "crlf": crlf,
        "bom_crlf": b"\xef\xbb\xbf" + crlf,
        "no_final_newline": data[:-1],
        "crlf_no_final_newline": crlf[:-2],
    }


def test_variants_round_trip_byte_for_byte(sample_path, tmp_path):
    data = sample_path.read_bytes()
    base = read(sample_path)
    if any(i.kind in BAD_LINE_KINDS for i in base.issues) or b"\n\n" in data:
        pytest.skip("has bad or blank lines (covered by test_sample_round_trip)")
    for name, variant in _variants(data).items():
        src = tmp_path / f"{name}.jsonl"
        src.write_bytes(variant)
        sf = read(src)
        assert [(i.line, i.kind) for i in sf.issues] == [(i.line, i.kind) for i in base.issues], name
        assert sf.entries == base.entries and sf.header == base.header, name
        out = tmp_path / f"{name}.out.jsonl"
        write_session(sf, out)
        assert out.read_bytes() == variant, name


# ---------------------------------------------------------------------------------------------
# random entries

_text = st.text(max_size=12) | st.sampled_from(["😀", "𝄞 astral 🎉", "a\u2028b", '\x00\n\t"\\/', "é中文", ""])
_ids = st.text("0123456789abcdef", min_size=8, max_size=8)
_opt_text = st.none() | _text
# A float in [2**53, 1e21) prints as an integer, which Python reads back as an int that differs
# from the double (JavaScript reads the same double): keep floats outside that range.
_num = st.integers(-(2**53), 2**53) | st.floats(allow_nan=False, allow_infinity=False).filter(
    lambda x: abs(x) < 2**53 or abs(x) >= 1e21)
_opt_num = st.none() | _num
_opt_bool = st.none() | st.booleans()
_json = st.recursive(
    st.none() | st.booleans() | _num | _text,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(_text, c, max_size=3),
    max_leaves=10,
)
# unknown keys: never a known key of either dialect
_extra = st.dictionaries(st.text(max_size=6).map(lambda s: "x_" + s), _json, max_size=2)

_blocks = st.one_of(
    st.builds(TextContent, text=_text, text_signature=_opt_text, extra=_extra),
    st.builds(ThinkingContent, thinking=_text, thinking_signature=_opt_text, redacted=_opt_bool, extra=_extra),
    st.builds(ImageContent, data=_text, mime_type=_opt_text, extra=_extra),
    st.builds(ToolCall, id=_opt_text, name=_text, thought_signature=_opt_text, extra=_extra,
              arguments=st.none() | st.dictionaries(_text, _json, max_size=4)),
    st.builds(lambda t, d: UnknownContent(block_type="x_" + t, raw={"type": "x_" + t, **d}), _text, _extra),
    st.builds(lambda v: UnknownContent(block_type=None, raw=v), _num | _text),
)
_block_tuple = st.lists(_blocks, max_size=3).map(tuple)
_content = _text | _block_tuple
_cost = st.builds(Cost, input=_opt_num, output=_opt_num, cache_read=_opt_num, cache_write=_opt_num,
                  total=_opt_num, extra=_extra)
_usage = st.builds(Usage, input=_opt_num, output=_opt_num, cache_read=_opt_num, cache_write=_opt_num,
                   total_tokens=_opt_num, cost=st.none() | _cost, extra=_extra)
_messages = st.one_of(
    st.builds(UserMessage, content=st.none() | _content, timestamp=_opt_num, extra=_extra),
    st.builds(AssistantMessage, content=st.none() | _block_tuple, api=_opt_text, provider=_opt_text,
              model=_opt_text, usage=st.none() | _usage, stop_reason=_opt_text, timestamp=_opt_num,
              error_message=_opt_text, extra=_extra),
    st.builds(ToolResultMessage, tool_call_id=_opt_text, tool_name=_opt_text, content=st.none() | _content,
              details=_json, is_error=_opt_bool, timestamp=_opt_num, extra=_extra),
    st.builds(BashExecutionMessage, command=_opt_text, output=_opt_text,
              exit_code=st.none() | st.integers(-255, 255), cancelled=_opt_bool, truncated=_opt_bool,
              full_output_path=_opt_text, timestamp=_opt_num, exclude_from_context=_opt_bool, extra=_extra),
    st.builds(CustomMessage, custom_type=_opt_text, content=st.none() | _content, display=_opt_bool,
              details=_json, timestamp=_opt_num, extra=_extra),
    st.builds(CompactionSummaryMessage, summary=_text, tokens_before=st.none() | st.integers(0, 10**9),
              timestamp=_opt_num, extra=_extra),
    st.builds(BranchSummaryMessage, summary=_text, from_id=_opt_text, timestamp=_opt_num, extra=_extra),
    st.builds(lambda r, d: UnknownMessage(message_role="x_" + r, raw={"role": "x_" + r, **d}), _text, _extra),
)
_base = {"id": _ids, "parent_id": st.none() | _ids, "timestamp": _opt_text, "extra": _extra}
_entries = st.one_of(
    st.builds(MessageEntry, message=st.none() | _messages, **_base),
    st.builds(ThinkingLevelChangeEntry, thinking_level=_opt_text, **_base),
    st.builds(ModelChangeEntry, provider=_opt_text, model_id=_opt_text, **_base),
    st.builds(ActiveToolsChangeEntry, active_tool_names=st.lists(_text, max_size=3).map(tuple), **_base),
    st.builds(CompactionEntry, summary=_text, first_kept_entry_id=st.none() | _ids,
              tokens_before=st.none() | st.integers(0, 10**9), details=_json, from_hook=_opt_bool,
              usage=st.none() | _usage, retained_tail=st.none() | st.lists(_messages, max_size=2).map(tuple),
              **_base),
    st.builds(BranchSummaryEntry, from_id=st.none() | _ids, summary=_text, details=_json, from_hook=_opt_bool,
              usage=st.none() | _usage, **_base),
    st.builds(CustomEntry, custom_type=_opt_text, data=_json, **_base),
    st.builds(CustomMessageEntry, custom_type=_opt_text, content=st.none() | _content, display=_opt_bool,
              details=_json, **_base),
    st.builds(LabelEntry, target_id=st.none() | _ids, label=_opt_text, **_base),
    st.builds(SessionInfoEntry, name=_opt_text, **_base),
    st.builds(LeafEntry, target_id=st.none() | _ids, **_base),
    # an unknown type: id and timestamp are spelled alike in both dialects
    st.builds(lambda t, i, ts, d: UnknownEntry(id=i, timestamp=ts, entry_type="x_" + t,
                                               raw={"type": "x_" + t, "id": i, "timestamp": ts, **d}),
              _text, _ids, _text, _extra),
)
_headers = st.builds(SessionHeader, version=st.none() | st.integers(1, 9), id=_text, timestamp=_opt_text,
                     cwd=_opt_text, parent_session=_opt_text,
                     metadata=st.none() | st.dictionaries(_text, _json, max_size=3), extra=_extra)


@given(_entries, st.sampled_from(["pi", "seed"]))
def test_entry_dict_round_trip(entry, dialect):
    d = entry_to_dict(entry, dialect)
    assert entry_from_dict(d, dialect) == entry
    # through the text pi would write
    assert entry_from_dict(js_parse(js_stringify(d)), dialect) == entry
    assert entry_to_dict(entry_from_dict(d, dialect), dialect) == d


@given(_entries)
def test_entry_dialect_conversion(entry):
    seed = entry_to_dict(entry, "seed")
    assert entry_to_dict(entry_from_dict(seed, "seed"), "pi") == entry_to_dict(entry, "pi")


@given(_headers, st.sampled_from(["pi", "seed"]))
def test_header_dict_round_trip(header, dialect):
    d = header_to_dict(header, dialect)
    assert header_from_dict(js_parse(js_stringify(d)), dialect) == header


@settings(max_examples=60, deadline=None)  # (it writes files: a stalled disk is not a slow round trip)
@given(_headers, st.lists(_entries, max_size=6), st.sampled_from(["pi", "seed"]))
def test_file_round_trip(tmp_path_factory, header, entries, dialect):
    from dataclasses import replace

    header = replace(header, version=3)  # an older pi version would be migrated on reading
    p = tmp_path_factory.mktemp("rt") / "s.jsonl"
    write_session(SessionFile(path=None, header=header, entries=entries), p, dialect=dialect)
    back = read(p)
    assert back.header == header
    assert back.entries == entries
    assert not any(i.kind in BAD_LINE_KINDS | {"missing_header"} for i in back.issues)
    if any(not isinstance(e, UnknownEntry) for e in entries):
        assert back.dialect == dialect
    # and written again in its own dialect: byte for byte
    p2 = p.with_name("again.jsonl")
    write_session(back, p2)
    assert p2.read_bytes() == p.read_bytes()
