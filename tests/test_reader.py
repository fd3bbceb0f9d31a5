"""The tolerant reader: damaged input, on_bad_lines, pi's expected results, read-only access."""

from __future__ import annotations

import json
import warnings
from collections import Counter
from pathlib import Path

import pytest

from sessionlab._jsjson import js_stringify
from sessionlab.errors import BadInputError, BadLinesWarning
from sessionlab.pi.io import header_to_dict, parse_session_bytes, read_session
from sessionlab.pi.model import LeafEntry, MessageEntry, UnknownEntry

HEADER = '{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}'


def msg(eid: str | None, parent: str | None, text: str = "hi", **more) -> str:
    """One v3 message line (no newline)."""
    d: dict = {"type": "message"}
    if eid is not None:
        d["id"] = eid
    d.update({"parentId": parent, "timestamp": "2026-01-01T00:00:01.000Z",
              "message": {"role": "user", "content": text, "timestamp": 1}})
    d.update(more)
    return js_stringify(d)


A1, A2, A3, A4 = msg("a1", None), msg("a2", "a1"), msg("a3", "a2"), msg("a4", "a3")
BAD_UTF8 = msg("a2", "a1", "xQQy").encode().replace(b"QQ", b"\xff\xfe")  # not UTF-8 inside a string


def lines(*ls: str | bytes, end: bytes = b"\n") -> bytes:
    return b"\n".join(x if isinstance(x, bytes) else x.encode() for x in ls) + end


def read(data: bytes, **kw):
    return parse_session_bytes(data, path="t.jsonl", on_bad_lines="skip", **kw)


def kinds(sf) -> list[tuple[int, str]]:
    return [(i.line, i.kind) for i in sf.issues]


# (name, file bytes, number of entries loaded, issues as (line, kind))
DAMAGE = [
    ("clean", lines(HEADER, A1, A2, A3), 3, []),
    ("invalid_json_middle", lines(HEADER, A1, "{not json", A2, A3), 3, [(3, "invalid_json")]),
    ("not_json_words", lines(HEADER, A1, "nullify", "123 abc", A2), 2, [(3, "invalid_json"), (4, "invalid_json")]),
    ("trailing_comma", lines(HEADER, A1, A2[:-1] + ",}", A3), 2, [(3, "invalid_json"), (4, "dangling_parent")]),
    ("nan_value", lines(HEADER, A1, msg("a2", "a1", n=1).replace('"n":1', '"n":NaN'), A3), 2,
     [(3, "invalid_json"), (4, "dangling_parent")]),
    ("truncated_last_line", lines(HEADER, A1, A2, A3[:40], end=b""), 2, [(4, "truncated_last_line")]),
    ("cut_inside_line_with_newline", lines(HEADER, A1, A2[:40], A3), 2,
     [(3, "invalid_json"), (4, "dangling_parent")]),
    ("glued_objects", lines(HEADER, A1, A2 + A3, A4), 4, [(3, "glued_objects")]),
    ("glued_three_with_space", lines(HEADER, A1 + " " + A2 + A3, A4), 4, [(2, "glued_objects")]),
    ("glued_then_garbage", lines(HEADER, A1, A2 + A3 + "{x", A4), 4, [(3, "invalid_json"), (3, "glued_objects")]),
    ("not_an_object", lines(HEADER, A1, "[1,2]", "5", '"str"', "null", "true", A2), 2,
     [(3, "not_an_object"), (4, "not_an_object"), (5, "not_an_object"), (6, "not_an_object"),
      (7, "not_an_object")]),
    ("invalid_utf8", lines(HEADER, A1, BAD_UTF8, A3),
     3, [(3, "invalid_utf8")]),
    ("missing_header", lines(A1, A2), 2, [(1, "missing_header")]),
    ("empty_file", b"", 0, [(1, "missing_header")]),
    ("only_blank_lines", b"\n  \n\n", 0, [(1, "missing_header")]),
    ("header_not_first", lines(A1, HEADER, A2), 3,
     [(1, "missing_header"), (2, "unknown_type")]),
    ("header_without_id", lines('{"type":"session","version":3}', A1), 2,
     [(1, "missing_header"), (1, "unknown_type"), (1, "missing_id")]),
    ("garbage_before_header", lines("not json at all", HEADER, A1), 1, [(1, "invalid_json")]),
    ("unsupported_version", lines(HEADER.replace('"version":3', '"version":7'), A1, A2), 2,
     [(1, "unsupported_version")]),
    ("version_string", lines(HEADER.replace('"version":3', '"version":"3"'), A1), 1, [(1, "unsupported_version")]),
    ("missing_id", lines(HEADER, A1, msg(None, "a1"), A3), 3, [(3, "missing_id"), (4, "dangling_parent")]),
    ("id_not_a_string", lines(HEADER, A1, msg("a2", "a1").replace('"id":"a2"', '"id":5')), 2, [(3, "missing_id")]),
    ("id_a_list", lines(HEADER, A1, msg("a2", "a1").replace('"id":"a2"', '"id":[1]')), 2, [(3, "missing_id")]),
    ("parent_an_object", lines(HEADER, A1, msg("a2", "a1").replace('"parentId":"a1"', '"parentId":{}')), 2,
     [(3, "dangling_parent")]),
    ("duplicate_id", lines(HEADER, A1, A2, A3, msg("a2", "a1", "again")), 4, [(5, "duplicate_id")]),
    ("dangling_parent", lines(HEADER, A1, msg("a2", "zz"), A3), 3, [(3, "dangling_parent")]),
    ("self_parent", lines(HEADER, A1, msg("a2", "a2"), A3), 3, [(3, "parent_cycle")]),
    ("two_cycle", lines(HEADER, A1, msg("b1", "b2"), msg("b2", "b1"), A2), 4, [(3, "parent_cycle")]),
    ("three_cycle_and_tail", lines(HEADER, msg("c1", "c3"), msg("c2", "c1"), msg("c3", "c2"), msg("c4", "c3")), 4,
     [(2, "parent_cycle")]),
    ("unknown_type", lines(HEADER, A1, '{"type":"mystery","id":"m1","parentId":"a1","timestamp":"2026-01-01T00:00:02Z",'
                                       '"x":[1]}', msg("a2", "m1")), 3,
     [(3, "unknown_type")]),
    ("leaf_dangling_target", lines(HEADER, A1, '{"type":"leaf","id":null,"parentId":null,"targetId":"nope"}'), 2,
     [(3, "dangling_parent")]),
    ("blank_lines", lines(HEADER, "", A1, "   ", "\t", A2, "", end=b"\n\n"), 2, []),
    ("bom", b"\xef\xbb\xbf" + lines(HEADER, A1, A2), 2, []),
    ("crlf", lines(HEADER, A1, A2).replace(b"\n", b"\r\n"), 2, []),
    ("bom_crlf_blank", b"\xef\xbb\xbf" + lines(HEADER, "", A1, A2).replace(b"\n", b"\r\n"), 2, []),
    ("no_final_newline", lines(HEADER, A1, A2, end=b""), 2, []),
    ("everything_at_once",
     lines("junk", HEADER, A1, "", "{bad", A2 + A3, "[]", msg("a2", "a1"), msg("x1", "x1"),
           '{"type":"odd","id":"o1","parentId":"a1","timestamp":"2026-01-01T00:00:02Z"}', msg(None, "zz"), msg("a9", "a1")[:30], end=b""),
     7,
     [(1, "invalid_json"), (5, "invalid_json"), (6, "glued_objects"), (7, "not_an_object"), (8, "duplicate_id"),
      (9, "parent_cycle"), (10, "unknown_type"), (11, "missing_id"), (11, "dangling_parent"),
      (12, "truncated_last_line")]),
]


@pytest.mark.parametrize(("data", "n_entries", "issues"), [d[1:] for d in DAMAGE], ids=[d[0] for d in DAMAGE])
def test_damage(data, n_entries, issues):
    sf = read(data)
    assert len(sf.entries) == n_entries
    assert kinds(sf) == issues
    assert all(i.path == "t.jsonl" and i.message for i in sf.issues)


def test_damage_details():
    sf = read(lines(HEADER, A1, A2 + A3, A4))
    assert [e.id for e in sf.entries] == ["a1", "a2", "a3", "a4"]
    assert sf.line_numbers == [2, 3, 3, 4]

    sf = read(lines(HEADER, A1, BAD_UTF8, A3))
    assert sf.entries[1].message.content == "x\ufffd\ufffdy"
    assert "U+FFFD" in sf.issues[0].message

    sf = read(lines(HEADER, A1, '{"type":"mystery","id":"m1","parentId":"a1","x":[1]}'))
    assert sf.entries[1] == UnknownEntry(id="m1", parent_id="a1", entry_type="mystery",
                                         raw={"type": "mystery", "id": "m1", "parentId": "a1", "x": [1]})
    assert sf.issues[0].entry_id == "m1"

    sf = read(lines(A1, A2))
    assert sf.header is None and [e.id for e in sf.entries] == ["a1", "a2"]

    sf = read(lines("not json at all", HEADER, A1))
    assert sf.header is not None and sf.header.id == "s1"

    sf = read(lines(HEADER.replace('"version":3', '"version":7'), A1))
    assert sf.version == 3 and sf.header.version == 7  # read as version 3, header as written

    sf = read(lines(HEADER, "", A1, "   ", A2))
    assert sf.line_numbers == [3, 5]

    sf = read(lines(HEADER, A1, A2, A3, msg("a2", "a1", "again")))
    assert "line 3" in sf.issues[0].message and sf.issues[0].entry_id == "a2"

    long_bad = "{" + "x" * 500
    sf = read(lines(HEADER, long_bad, A1))
    assert len(sf.issues[0].excerpt) == 80 and sf.issues[0].excerpt.endswith("…")


def test_bom_and_crlf_are_remembered():
    plain = read(lines(HEADER, A1, A2))
    assert (plain.bom, plain.newline, plain.final_newline) == (False, "\n", True)
    sf = read(b"\xef\xbb\xbf" + lines(HEADER, A1, A2).replace(b"\n", b"\r\n"))
    assert (sf.bom, sf.newline) == (True, "\r\n")
    assert sf.entries == plain.entries and sf.header == plain.header
    assert read(lines(HEADER, A1, end=b"")).final_newline is False


def test_leaf_entry_without_id_is_fine():
    sf = read(lines(HEADER, A1, A2, '{"type":"leaf","parentId":null,"targetId":"a1"}'))
    assert sf.issues == []
    assert isinstance(sf.entries[-1], LeafEntry) and sf.leaf_id == "a1"


def test_version_null_or_absent_is_v1():
    for header in ('{"type":"session","id":"s","version":null}', '{"type":"session","id":"s"}'):
        sf = read(lines(header, '{"type":"message","timestamp":"2026-01-01T00:00:01Z","message":{"role":"user",'
                                '"content":"x"}}'))
        assert sf.version == 1 and sf.issues == []
        assert sf.entries[0].id == "00000001" and sf.header.version == 3


def test_v1_with_glued_line_counts_only_lines_pi_parses():
    e = '{"type":"message","timestamp":"2026-01-01T00:00:01Z","message":{"role":"user","content":"%s"}}'
    comp = ('{"type":"compaction","timestamp":"2026-01-01T00:00:02Z","summary":"s","firstKeptEntryIndex":3,'
            '"tokensBefore":1}')
    sf = read(lines('{"type":"session","id":"s"}', e % "1", (e % "2") + (e % "3"), e % "4", e % "5", comp))
    assert kinds(sf) == [(3, "glued_objects")]
    # pi drops the glued line: "4" is its 2nd entry, "5" its 3rd (index 3 with the header at 0)
    assert [x.id for x in sf.entries] == ["00000001", "80000001", "80000002", "00000002", "00000003", "00000004"]
    assert [x.parent_id for x in sf.entries] == [None, "00000001", "80000001", "80000002", "00000002", "00000003"]
    assert sf.entries[-1].first_kept_entry_id == "00000003"


# ---------------------------------------------------------------------------------------------
# damage injected into pi's sample files

SAMPLE_A = "generated/sessions/--home-user-proj--/2026-01-15T10-00-01-000Z_00000001-0000-4000-8000-000000000000.jsonl"


@pytest.fixture
def sample_lines(pi_data: Path) -> list[bytes]:
    return (pi_data / SAMPLE_A).read_bytes().split(b"\n")[:-1]  # 33 lines


def test_sample_invalid_line_in_middle(sample_lines):
    ls = sample_lines[:10] + [b'{"type":"message","id":"ff'] + sample_lines[10:]
    sf = read(b"\n".join(ls) + b"\n")
    assert len(sf.entries) == 32 and kinds(sf) == [(11, "invalid_json")]


def test_sample_truncated_last_line(sample_lines):
    last = sample_lines[-1]
    sf = read(b"\n".join(sample_lines[:-1] + [last[: len(last) // 2]]))
    assert len(sf.entries) == 31 and kinds(sf) == [(33, "truncated_last_line")]


def test_sample_glued_lines(sample_lines):
    ls = sample_lines[:5] + [sample_lines[5] + sample_lines[6]] + sample_lines[7:]
    sf = read(b"\n".join(ls) + b"\n")
    assert len(sf.entries) == 32 and kinds(sf) == [(6, "glued_objects")]
    clean = read(b"\n".join(sample_lines) + b"\n")
    assert sf.entries == clean.entries


def test_sample_dropped_line_makes_orphans(sample_lines):
    # removing entry 00000002 (line 2) leaves its child 00000003 (now line 2) dangling
    ls = sample_lines[:1] + sample_lines[2:]
    sf = read(b"\n".join(ls) + b"\n")
    assert len(sf.entries) == 31
    assert kinds(sf) == [(2, "dangling_parent")]
    assert sf.issues[0].entry_id == "00000003"


def test_sample_bom_crlf_silent(sample_lines):
    data = b"\xef\xbb\xbf" + b"\r\n".join(sample_lines) + b"\r\n"
    sf = read(data)
    assert len(sf.entries) == 32 and sf.issues == []


# ---------------------------------------------------------------------------------------------
# on_bad_lines

BAD = lines(HEADER, A1, "{bad", A2, "[1]")


def test_raise_carries_issues():
    with pytest.raises(BadInputError) as info:
        parse_session_bytes(BAD, path="t.jsonl", on_bad_lines="raise")
    assert [(i.line, i.kind) for i in info.value.issues] == [(3, "invalid_json"), (5, "not_an_object")]
    assert isinstance(info.value, ValueError)
    assert "1 invalid_json, 1 not_an_object" in str(info.value)


def test_raise_on_a_clean_file_returns_normally():
    assert parse_session_bytes(lines(HEADER, A1), on_bad_lines="raise").issues == []


def test_warn_emits_one_warning_per_file(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_bytes(BAD)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sf = read_session(p, on_bad_lines="warn")
    assert [w.category for w in caught] == [BadLinesWarning]
    text = str(caught[0].message)
    assert str(p) in text and "1 invalid_json, 1 not_an_object" in text and "line 3" in text
    assert kinds(sf) == [(3, "invalid_json"), (5, "not_an_object")]


def test_warn_is_the_default(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_bytes(BAD)
    with pytest.warns(BadLinesWarning, match="1 invalid_json"):
        sf = read_session(p)
    assert len(sf.issues) == 2


def test_skip_is_silent_but_keeps_issues(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_bytes(BAD)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sf = read_session(p, on_bad_lines="skip")
    assert caught == []
    assert kinds(sf) == [(3, "invalid_json"), (5, "not_an_object")]
    assert [e.id for e in sf.entries] == ["a1", "a2"]


def test_clean_file_warns_nothing():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parse_session_bytes(lines(HEADER, "", A1).replace(b"\n", b"\r\n"), on_bad_lines="warn")
    assert caught == []


def test_bad_on_bad_lines_value():
    with pytest.raises(ValueError, match="on_bad_lines"):
        parse_session_bytes(lines(HEADER), on_bad_lines="ignore")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# pi's expected results

EXPECTED_BAD_KINDS = {"invalid_json", "truncated_last_line"}


def test_sample_matches_pi(sample_path, pi_expected):
    exp = pi_expected(sample_path)
    sf = read_session(sample_path, on_bad_lines="skip")
    has_missing_header = any(i.kind == "missing_header" for i in sf.issues)
    assert (exp["valid"] is False) == has_missing_header
    assert len({i.line for i in sf.issues if i.kind in EXPECTED_BAD_KINDS}) == exp["malformedLines"]
    if not exp["valid"]:
        assert sf.header is None
        return
    assert len(sf.entries) == exp["entryCount"]
    counts = Counter(e.type for e in sf.entries)
    assert list(counts.items()) == list(exp["entryTypeCounts"].items())  # same order of first appearance
    assert header_to_dict(sf.header) == exp["header"]
    assert sf.version == exp["originalVersion"]
    # ids and parents: pi's tree has every entry once
    assert {e.id: e.parent_id for e in sf.entries} == {r["id"]: r["parentId"] for r in exp["tree"]}
    assert sf.leaf_id == exp["defaultLeafId"]


@pytest.mark.parametrize(
    "name", ["real/before-compaction", "real/large-session", "generated/synthetic/synthetic-v1-compaction"])
def test_v1_samples_get_counter_ids(pi_data, pi_expected, name):
    sample_path = pi_data / f"{name}.jsonl"
    raw = [json.loads(x) for x in sample_path.read_text(encoding="utf-8").splitlines()]
    assert "version" not in raw[0]
    sf = read_session(sample_path, on_bad_lines="skip")
    exp = pi_expected(sample_path)
    ids = [f"{n:08x}" for n in range(1, len(sf.entries) + 1)]
    assert [e.id for e in sf.entries] == ids
    assert [r["id"] for r in exp["tree"]] == ids  # a v1 file is one chain: pre-order is file order
    assert [e.parent_id for e in sf.entries] == [None] + ids[:-1]
    assert sf.version == 1 and sf.header.version == 3
    for obj, e in zip(raw[1:], sf.entries):
        if "firstKeptEntryIndex" in obj:
            k = obj["firstKeptEntryIndex"]
            assert e.first_kept_entry_id == ids[k - 1] and "firstKeptEntryIndex" not in e.extra


def test_v2_hookmessage_becomes_custom(pi_data):
    sf = read_session(pi_data / "generated/synthetic/synthetic-v2-hookmessage.jsonl", on_bad_lines="skip")
    assert sf.version == 2 and sf.header.version == 3
    m = sf.entries[2]
    assert isinstance(m, MessageEntry) and m.message.role == "custom"
    assert (m.message.custom_type, m.message.content, m.message.display) == ("todo", "remember the todo", True)
    assert [e.id for e in sf.entries] == ["a0000001", "a0000002", "a0000003", "a0000004"]


@pytest.mark.parametrize(
    ("name", "issues"),
    [
        ("synthetic-v3-malformed", [(3, "invalid_json"), (5, "dangling_parent")]),
        ("synthetic-garbage-before-header", [(1, "invalid_json")]),
        ("synthetic-no-header", [(1, "missing_header")]),
        ("synthetic-v1-compaction", []),
        ("synthetic-v2-hookmessage", []),
    ],
)
def test_synthetic_sample_issues(pi_data, name, issues):
    sf = read_session(pi_data / "generated/synthetic" / f"{name}.jsonl", on_bad_lines="skip")
    assert kinds(sf) == issues


# ---------------------------------------------------------------------------------------------
# reading never modifies the file


def _snapshot(p: Path) -> tuple[int, int, bytes]:
    st = p.stat()
    return st.st_mtime_ns, st.st_size, p.read_bytes()


def test_reading_never_modifies_samples(sample_path):
    before = _snapshot(sample_path)
    for mode in ("skip", "warn", "raise"):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                read_session(sample_path, on_bad_lines=mode)
        except BadInputError:
            pass
    assert _snapshot(sample_path) == before


@pytest.mark.parametrize(("data", "n_entries", "issues"), [d[1:] for d in DAMAGE], ids=[d[0] for d in DAMAGE])
def test_reading_never_modifies_damaged_files(tmp_path, data, n_entries, issues):
    p = tmp_path / "f.jsonl"
    p.write_bytes(data)
    before = _snapshot(p)
    read_session(p, on_bad_lines="skip")
    assert _snapshot(p) == before
    assert sorted(x.name for x in tmp_path.iterdir()) == ["f.jsonl"]
