"""The native C scanner (sessionlab._scan) against the msgspec path and the tolerant object-model path.

The rule: whatever the input, the entries, blocks, sessions and issues tables are identical with the
native scanner on and off, and the scanner never crashes the process. It may refuse a file (the
slower paths then load it); it must never accept a file and give different rows.
"""

from __future__ import annotations

import json
import locale
import math
import os
import re
import shutil
import subprocess
import threading
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessionlab import synth
from sessionlab.pi.context import iso_to_ms
from sessionlab.tables import _file, _load, _native, blocks_table, entries_table, issues_table, sessions_table
from sessionlab.tables._arrays import parse_timestamps
from sessionlab.tables._schema import TIMESTAMP
from tests._native_cases import (
    ACCEPTED,
    BASIC,
    DATA,
    DATA_FILES,
    FIXED,
    GENERATED,
    LATE_REFUSAL,
    PI16_FILES,
    REFUSED,
    SLOW_ARGS,
    START,
    _accepts_fast,
    _differences,
    _scan,
    assert_native_agrees,
    assert_paths_agree,
    asst,
    needs_scan,
    pi_file,
    scan,
    sub,
    text,
    user,
)

# ------------------------------------------------------------------ 1. the extension is built


def test_native_is_built():
    """CI builds the C extension; without it the loader silently loses its speed."""
    if os.environ.get("SESSIONLAB_NATIVE") == "0":
        pytest.skip("SESSIONLAB_NATIVE=0")
    assert _native.native_available()


# ------------------------------------------------------------------ 2. the sample files


@pytest.mark.parametrize("path", DATA_FILES, ids=lambda p: p.parent.name[:12] + "/" + p.name[:28])
def test_sample_file_paths_agree(path, monkeypatch):
    """Every file under tests/data gives the same tables on the three paths."""
    assert_paths_agree(path, monkeypatch)


def test_sample_folder_paths_agree(monkeypatch):
    """The whole folder at once (native batches, accepted and refused files mixed)."""
    assert_paths_agree(DATA, monkeypatch)


@needs_scan
def test_clean_sample_files_accepted_by_native():
    """Every file the msgspec path accepts, the scanner accepts too (refusing is allowed, but rare)."""
    fast_only = []
    for path in DATA_FILES:
        data = path.read_bytes()
        if _accepts_fast(data) and isinstance(scan(data), str):
            fast_only.append((path.name, scan(data)))
    assert fast_only == []
    for path in GENERATED:
        info = scan(path.read_bytes())
        # sample 00000026 has an orphan (a dangling parent): both fast paths refuse it
        assert isinstance(info, tuple) or "00000026" in path.name, (path.name, info)


def test_pi16_sample_files_are_there():
    """The pi 1.6.0 files (8) and the newer pi's (2) are part of the sample files compared above."""
    assert len(PI16_FILES) == 10 and set(PI16_FILES) <= set(DATA_FILES)


@needs_scan
@pytest.mark.parametrize("path", PI16_FILES, ids=lambda p: p.parent.name[:12] + "/" + p.name[:28])
def test_pi16_sample_files_take_the_fast_paths(path, monkeypatch):
    """Files pi 1.6.0 wrote (usage and context_edit entries, system messages, responseModel...) and a newer
    pi's files are clean: the scanner accepts them, and so does the msgspec path with the scanner off."""
    data = path.read_bytes()
    assert isinstance(scan(data), tuple), scan(data)
    assert _accepts_fast(data)
    (res,) = _file.load_chunk([str(path)], True)
    assert res.fast and res.issues == [] and res.entries.num_rows > 0
    monkeypatch.setenv("SESSIONLAB_NATIVE", "0")
    (res,) = _file.load_chunk([str(path)], True)
    assert res.fast and res.issues == []


def _cross_rows(data: bytes) -> int:
    """The rows whose values need other lines of their file, counted from the raw lines: context
    edits, system messages, and compactions that carry a systemMessage."""
    n = 0
    for line in data.splitlines()[1:]:
        obj = json.loads(line) if line.strip() else {}
        msg = obj.get("message")
        n += (obj.get("type") == "context_edit" or (obj.get("type") == "compaction" and "systemMessage" in obj)
              or (obj.get("type") == "message" and isinstance(msg, dict) and msg.get("role") == "system"))
    return n


@needs_scan
def test_scanner_counts_the_rows_that_need_other_lines():
    """``add`` ends with that count: the batch keeps a copy of a file's bytes only when it is not 0."""
    counts = {p.name: (info[-1], _cross_rows(p.read_bytes())) for p in DATA_FILES
              if isinstance(info := scan(p.read_bytes()), tuple)}
    assert all(got == want for got, want in counts.values()), counts
    assert sum(1 for got, _ in counts.values() if got) >= 8 and sum(1 for got, _ in counts.values() if not got) >= 8


@needs_scan
def test_scanner_line_starts_are_where_each_entry_line_starts():
    """finish()["line_starts"]: each entry row's line start in its file's bytes (the header, blank
    lines and CRLF ends skipped), for files scanned one after the other into one batch."""
    files = [p.read_bytes() for p in DATA_FILES if isinstance(scan(p.read_bytes()), tuple)]
    files.append(pi_file(*START, user(), asst([text("x")])).replace(b"\n", b"\r\n\n"))
    sc = _scan.Scanner()
    want = []
    for data in files:
        assert isinstance(sc.add(data), tuple)
        offsets = [0] + [i + 1 for i, c in enumerate(data) if c == 10]
        starts = [o for o in offsets if o < len(data) and data[o:o + 1] == b"{"][1:]  # (the header has no row)
        want += starts
    got = np.frombuffer(sc.finish()["line_starts"], np.int64).tolist()
    assert got == want and len(want) > 1000


def test_read_buffer_reads_whole_files_of_any_size(tmp_path):
    """One buffer serves files larger and smaller than the one before (a view is valid until the
    next read)."""
    files = [tmp_path / f"{i}.jsonl" for i in range(3)]
    for f, size in zip(files, (300_000, 5, 1_000_000)):
        f.write_bytes(bytes(range(256)) * (size // 256) + b"x" * (size % 256))
    buffer = _file.ReadBuffer()
    for f in files:
        with open(f, "rb") as fh:
            assert bytes(buffer.read(fh, fh.read(7))) == f.read_bytes()
    assert len(buffer.buf) > 1_000_000  # (the last file needed a larger buffer)


@needs_scan
def test_files_read_into_one_buffer_keep_their_own_bytes():
    """pi 1.6 files (rows that need other lines) read one after the other into the chunk's buffer:
    the batch keeps each one's bytes (the buffer is left to it), so the chunk's tables equal each
    file's alone."""
    paths = [str(p) for p in PI16_FILES]
    together = _file.load_chunk(paths)
    assert [r.loader for r in together] == ["native"] * len(paths)
    for r in together:
        (alone,) = _file.load_chunk([r.path])
        assert r.entries.equals(alone.entries), r.path
    assert sum(r.entries["system_est_tokens"].null_count < r.entries.num_rows for r in together) >= 5


def test_read_buffer_reads_a_file_that_grew(tmp_path, monkeypatch):
    """A file longer than its size said a moment before is read to its end."""
    f = tmp_path / "grew.jsonl"
    f.write_bytes(b"y" * 100_000)

    class Small:
        st_size = 10

    monkeypatch.setattr(_file.os, "fstat", lambda fd: Small)
    with open(f, "rb") as fh:
        assert bytes(_file.ReadBuffer().read(fh, fh.read(3))) == f.read_bytes()


# ------------------------------------------------------------------ 3. generated sessions

SYNTH_OPTIONS = [
    dict(seed=1, turns=6),
    dict(seed=2, turns=25, branch_prob=0.4, branch_summary_prob=0.7, label_prob=0.4, name_prob=1.0),
    dict(seed=3, turns=30, compaction_window=24_000, result_scale=2.0),
    dict(seed=4, turns=20, model_switch_prob=0.5, thinking_change_prob=0.5, custom_prob=0.4, bash_prob=0.4),
    dict(seed=5, turns=15, branch_prob=0.3, compaction_window=30_000, label_prob=0.5, custom_prob=0.3,
         bash_prob=0.3, tool_rounds=6.0),
    dict(seed=6, turns=4, name_prob=0.0, tool_rounds=0.5, cwd="/home/üser/prøj 😀"),
]


@pytest.fixture(scope="module")
def synth_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("synth")
    for opts in SYNTH_OPTIONS:
        synth.generate_session(out / f"s{opts['seed']}.jsonl", **opts)
    return out


@needs_scan
def test_generated_sessions_are_accepted(synth_dir):
    """pi-like sessions (branches, compactions, labels, custom entries...) all take the native path."""
    files = sorted(synth_dir.glob("*.jsonl"))
    assert len(files) == len(SYNTH_OPTIONS)
    for f in files:
        assert isinstance(scan(f.read_bytes()), tuple), (f.name, scan(f.read_bytes()))
    res = _load.load_files(synth_dir, want_blocks=True, on_bad_lines="skip")
    assert [r.loader for r in res.files] == ["native"] * len(files)
    kinds = set(entries_table(synth_dir, on_bad_lines="skip").column("type").to_pylist())
    assert {"compaction", "branch_summary", "label", "session_info", "custom", "custom_message"} <= kinds


def test_generated_sessions_paths_agree(synth_dir, monkeypatch):
    assert_paths_agree(synth_dir, monkeypatch)


def test_generated_corpus_paths_agree(tmp_path, monkeypatch):
    """A small corpus in pi's folder layout (several sessions per project folder)."""
    synth.generate_corpus(tmp_path, n_sessions=5, target_bytes=400_000, seed=11)
    native = assert_paths_agree(tmp_path, monkeypatch)
    assert native["sessions"].num_rows == 5


# ------------------------------------------------------------------ 4. hand-made edge cases (cases in _native_cases)


@needs_scan
@pytest.mark.parametrize("name", ACCEPTED)
def test_edge_case_accepted_and_paths_agree(name, tmp_path, monkeypatch):
    """The scanner accepts the file, and the three paths give the same tables."""
    data = ACCEPTED[name]
    info = scan(data)
    assert isinstance(info, tuple), (name, info)
    assert _accepts_fast(data), "the scanner accepts a file the msgspec path refuses"
    f = tmp_path / f"{name}.jsonl"
    f.write_bytes(data)
    (res,) = _file.load_chunk([str(f)], True)
    assert res.loader == "native" and res.issues == []
    assert_paths_agree(f, monkeypatch)


@needs_scan
@pytest.mark.parametrize("name", REFUSED)
def test_edge_case_refused_and_paths_agree(name, tmp_path, monkeypatch):
    """The scanner refuses the file (without crashing), and the three paths give the same tables."""
    data = REFUSED[name]
    info = scan(data)
    assert isinstance(info, str), (name, info)
    f = tmp_path / f"{name}.jsonl"
    f.write_bytes(data)
    assert_paths_agree(f, monkeypatch)


@pytest.mark.parametrize("name", FIXED)
def test_former_disagreement_paths_agree(name, tmp_path, monkeypatch):
    """Files that once made the paths disagree (or a load raise): they agree now."""
    f = tmp_path / f"{name}.jsonl"
    f.write_bytes(FIXED[name])
    assert_paths_agree(f, monkeypatch)


def _entry_rows(data: bytes, tmp_path: Path) -> list[dict]:
    f = tmp_path / "x.jsonl"
    f.write_bytes(data)
    return entries_table(f, on_bad_lines="skip").to_pylist()


def test_edge_case_values(tmp_path):
    """A few of the values the edge cases must give (so agreement is not agreement on a wrong value)."""
    rows = {r["entry_id"]: r for r in _entry_rows(ACCEPTED["escaped_ids"], tmp_path)}
    assert rows["esc"]["parent_id"] == "\x00nul" and rows["ab"]["parent_id"] == "m/1"
    assert rows["m/1"]["model"] == "Anthropic/claude" and rows["ab2"]["parent_index"] == rows["ab"]["entry_index"]
    rows = _entry_rows(ACCEPTED["non_ascii_escaped"], tmp_path)
    assert rows[2]["est_tokens"] == 3  # "é 中文 😀 𝄞": 10 UTF-16 units
    rows = _entry_rows(ACCEPTED["usage_variants"], tmp_path)
    assert [r["context_tokens"] for r in rows[2:7]] == [5 + 7 + 11 + 13, 5, 3, 0, None]
    assert [r["cost_usd"] for r in rows[7:10]] == [None, 3.0, 1e-5]
    assert rows[13]["context_tokens"] == 2 * 2**53
    rows = _entry_rows(ACCEPTED["is_error_variants"], tmp_path)
    assert [r["is_error"] for r in rows[2:7]] == [False, None, True, None, None]
    rows = _entry_rows(ACCEPTED["images"], tmp_path)
    # pi 1.6 counts images in user messages too: "look" and two images, ceil((4 + 2 * 4800) / 4)
    assert [r["est_tokens"] for r in rows[2:7]] == [2401, 1200 + 1, 1200 + 1, 1 + 1200, 1]
    rows = _entry_rows(ACCEPTED["args_control_chars"], tmp_path)
    # JSON.stringify({"s": "\x01\x1f\x7f\b\f\n\r\t\x0b"}): 8 + 6 + 6 + 1 + 2 * 5 + 6 = 37 units; + "ok" + "bash"
    assert rows[2]["est_tokens"] == -(-(2 + 4 + 37) // 4)
    (s,) = sessions_table(tmp_path / "x.jsonl", on_bad_lines="skip").to_pylist()
    assert s["session_id"] == "sess-0001" and s["cwd"] == "/home/u/p"
    f = tmp_path / "names.jsonl"
    f.write_bytes(ACCEPTED["labels_and_names"])
    # pi 1.6: the latest session_info names the session; it has none, so the name is cleared
    assert sessions_table(f, on_bad_lines="skip").column("name").to_pylist() == [None]
    f.write_bytes(ACCEPTED["empty_name_only"])
    assert sessions_table(f, on_bad_lines="skip").column("name").to_pylist() == [None]


def _col(rows: list[dict], name: str) -> list:
    return [r[name] for r in rows]


def test_pi16_edge_case_values(tmp_path):
    """The pi 1.6 columns of the hand-made cases (values worked out by hand from the lines)."""
    rows = _entry_rows(ACCEPTED["pi16_usage_entries"], tmp_path)[2:]
    assert _col(rows, "usage_kind") == ["title", "usage", "usage", "usage", None, None, "import", "compaction", None,
                                        "compaction", "branch_summary", None, None]
    assert _col(rows, "input_tokens") == [120, 3, 1, None, None, None, 1, 120, None, None, 10, None, None]
    assert _col(rows, "context_tokens") == [1200, 7, 1, 0, None, None, 1, 1200, None, 0, 12, None, None]
    assert _col(rows, "reasoning_tokens")[:3] == [9, None, None] and rows[10]["reasoning_tokens"] == 1
    assert _col(rows, "cache_write_1h_tokens")[:3] == [20, None, None] and rows[7]["cache_write_1h_tokens"] == 7
    assert _col(rows, "cost_usd")[:3] == [0.0013275, None, 0.5]
    assert (rows[0]["provider"], rows[0]["model"]) == ("openai", "gpt-5") and rows[7]["provider"] is None
    assert rows[7]["system_est_tokens"] == 3  # "You are pi." and section "b": ceil(12 / 4)
    assert _entry_rows(REFUSED["escaped_system_message_key"], tmp_path)[2]["system_est_tokens"] == 1  # "abcd"
    rows = _entry_rows(ACCEPTED["pi16_assistant_fields"], tmp_path)[2:]
    assert rows[0]["thinking_level"] == "max"
    assert _col(rows, "response_model") == [None, None, "claude-sonnet-4-5-20250929", None, "gpt-5-2025-08-07", "m", None]
    assert (rows[2]["reasoning_tokens"], rows[2]["cache_write_1h_tokens"], rows[2]["usage_kind"]) == (12, 40, "message")
    # "" + "plan 😀" (7 units) + "ok" + "read" + '{"path":"a.txt"}' (16): ceil(29 / 4)
    assert (rows[2]["est_tokens"], rows[2]["tool_call_count"], rows[2]["image_count"]) == (8, 1, 0)
    assert _col(rows, "usage_kind") == [None, None, "message", "message", "message", None, None]
    rows = _entry_rows(ACCEPTED["pi16_images"], tmp_path)[2:]
    assert _col(rows, "image_count") == [2, 0, 0, None, 2, None, 1, 0, 1, 2, 0, None, None, 1]
    assert _col(rows, "est_tokens")[:5] == [2401, 2, 0, 0, 1] and rows[9]["est_tokens"] == 2401
    assert rows[13]["est_tokens"] == 1201  # a system message: "sys" and an image
    f = tmp_path / "img.jsonl"
    f.write_bytes(ACCEPTED["pi16_images"])
    user_blocks = blocks_table(f).filter(pa.compute.equal(blocks_table(f)["entry_id"], "e3")).column("chars")
    assert user_blocks.to_pylist() == [4, 4800, 4800]
    rows = _entry_rows(ACCEPTED["pi16_context_edits"], tmp_path)[6:]
    assert _col(rows, "target_id") == ["e3", "e4", "e4", "e5", "e6", "nowhere", None, "e3", "e3", None]
    assert _col(rows, "edit_action")[:5] == ["replace", "replace", "replace", "remove", "replace"]
    assert _col(rows, "est_tokens")[:5] == [2, 2, 3, None, 1201]  # "short"; "elided"; "elided again"; -; "x" + image
    rows = _entry_rows(ACCEPTED["pi16_system_messages"], tmp_path)
    sys_rows = [r for r in rows if r["role"] == "system"]
    assert len(sys_rows) == 6 and all(r["est_tokens"] is not None for r in sys_rows)
    tools = len(json.dumps([{"name": "read", "description": "Read a file", "parameters": {"type": "object"}}],
                           separators=(",", ":")))
    assert sys_rows[0]["est_tokens"] == -(-(11 + 7 + 11 + tools) // 4)  # content, the two sections ("😀": 2 units), tools
    rows = _entry_rows(ACCEPTED["pi16_keys_on_other_types"], tmp_path)[2:]
    assert _col(rows, "usage_kind") == [None] * 5 and _col(rows, "input_tokens") == [None] * 5
    assert _col(rows, "model") == [None, "gpt-5", None, None, None]


def _comma_locale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A locale whose decimal point is ',' (an installed one, else a minimal one built with localedef)."""
    before = locale.setlocale(locale.LC_NUMERIC)
    try:
        for name in ("de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "nl_NL.UTF-8", "ru_RU.UTF-8"):
            try:
                locale.setlocale(locale.LC_NUMERIC, name)
            except locale.Error:
                continue
            if locale.localeconv()["decimal_point"] == ",":
                return name
        if shutil.which("localedef") is None:
            pytest.skip("no comma-decimal locale and no localedef")
        src = tmp_path / "comma_src"
        src.write_text('LC_NUMERIC\ndecimal_point "<U002C>"\nthousands_sep "<U002E>"\ngrouping 3;3\nEND LC_NUMERIC\n')
        (tmp_path / "loc").mkdir()
        subprocess.run(["localedef", "-c", "-i", str(src), "-f", "ANSI_X3.4-1968", str(tmp_path / "loc" / "xx_COMMA")],
                       capture_output=True, check=False)
        monkeypatch.setenv("LOCPATH", str(tmp_path / "loc"))
        try:
            locale.setlocale(locale.LC_NUMERIC, "xx_COMMA")
        except locale.Error:
            pytest.skip("could not build a comma-decimal locale")
        return "xx_COMMA"
    finally:
        locale.setlocale(locale.LC_NUMERIC, before)


@needs_scan
def test_costs_ignore_the_numeric_locale(tmp_path, monkeypatch):
    """Python reads JSON numbers the same in every locale; so must the scanner (was: strtod followed
    LC_NUMERIC, and under a decimal-comma locale cost 0.0013275 was read as 0.0)."""
    comma = _comma_locale(tmp_path, monkeypatch)
    f = tmp_path / "cost.jsonl"
    f.write_bytes(pi_file(*START, asst([text("x")], usage={"input": 1, "cost": {"total": 0.0013275}})))
    before = locale.setlocale(locale.LC_NUMERIC)
    try:
        locale.setlocale(locale.LC_NUMERIC, comma)
        assert_native_agrees(f)
    finally:
        locale.setlocale(locale.LC_NUMERIC, before)


def test_timestamps_do_not_depend_on_the_batch(tmp_path):
    """A timestamp's value must not depend on which other files share its batch (was: year 0 kept by Arrow's
    cast with the scanner on, null through iso_to_ms with it off, and sessions_table raised)."""
    (tmp_path / "a.jsonl").write_bytes(pi_file(*START, user() | {"timestamp": "0000-01-01T00:00:00Z"}))
    (tmp_path / "b.jsonl").write_bytes(b"\xef\xbb\xbf" + pi_file(*START, user() | {"timestamp": "2026-01-05T10:00:00.1234Z"}))
    assert_native_agrees(tmp_path)


_TIMESTAMP_PARTS = (st.integers(0, 10_000), st.integers(0, 13), st.integers(0, 32), st.integers(0, 24),
                    st.integers(0, 60), st.integers(0, 60), st.sampled_from(["", ".", ".5", ".05", ".123", ".1234"]),
                    st.sampled_from(["Z", "Z", "", "+00:00", "-01:30", "z"]), st.sampled_from(["T", "T", " "]))


@needs_scan
@given(*_TIMESTAMP_PARTS)
def test_scanner_timestamps_are_iso_to_ms(year, month, day, hour, minute, second, frac, zone, sep):
    """The scanner's reading of a timestamp is ``iso_to_ms``'s wherever it reads one, and it reads
    every value of pi's own form that is a real date (the others are left to Python)."""
    text = f"{year:04d}-{month:02d}-{day:02d}{sep}{hour:02d}:{minute:02d}:{second:02d}{frac}{zone}"
    raw = text.encode()
    ms, ok = _scan.pi_timestamps(len(raw).to_bytes(4, "little"), raw, b"\x01")
    want = iso_to_ms(text)
    pi_form = re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,3})?Z", text)
    assert ok == (b"\x01" if pi_form and want is not None else b"\x00"), text
    if ok == b"\x01":
        assert int.from_bytes(ms, "little", signed=True) == want, text


@needs_scan
def test_scanner_timestamps_of_other_forms_are_parsed_in_python():
    """A batch's timestamps equal parse_timestamps (every path's reference), odd forms and nulls
    included."""
    values = ["2026-01-05T10:00:00.123Z", None, "2026-01-05 10:00:00", "2026-01-05T10:00:00+02:00",
              "2026-02-30T00:00:00Z", "0000-01-01T00:00:00Z", "2026-01-05T10:00:00.1234Z", "x"]
    arr = pa.array(values, pa.string())
    ends = np.frombuffer(arr.buffers()[1], np.int32)[1:].tobytes()
    valid = bytes(v is not None for v in values)
    got = _native._timestamps(("timestamp", ends, arr.buffers()[2].to_pybytes(), valid), TIMESTAMP)
    assert got.equals(parse_timestamps(values))
    assert got.null_count == 4
    odd = memoryview(b"\0" + ends)[1:]  # offsets at any alignment
    assert _scan.pi_timestamps(odd, arr.buffers()[2].to_pybytes(), valid) == _scan.pi_timestamps(
        ends, arr.buffers()[2].to_pybytes(), valid)


@needs_scan
def test_negative_zero_cost_has_one_sign(tmp_path, monkeypatch):
    """cost {"total": -0} is the integer 0, read as 0.0 on every path (Table.equals would hide a -0.0)."""
    f = tmp_path / "neg0.jsonl"
    f.write_bytes(sub(pi_file(*START, asst([text("x")], usage={"cost": {"total": 0.5}})), b'"total":0.5', b'"total":-0'))
    signs = []
    for native in ("1", "0"):
        monkeypatch.setenv("SESSIONLAB_NATIVE", native)
        signs.append(math.copysign(1, entries_table(f, on_bad_lines="skip").column("cost_usd")[2].as_py()))
    assert signs[0] == signs[1]


# ------------------------------------------------------------------ 5. batches, rollback, threads



def _file_results(paths: list[str]) -> list[tuple]:
    return [(r.path, r.fast, r.session, r.issues, r.entries, r.blocks) for r in _file.load_chunk(paths, True)]


def _same_result(a: tuple, b: tuple) -> None:
    assert a[:4] == b[:4]
    for x, y in zip(a[4:], b[4:]):
        assert (x is None) == (y is None)
        assert x is None or x.equals(y), a[0]


@needs_scan
@pytest.mark.parametrize("order", ["middle", "first", "last", "all_refused", "alternating"])
def test_refused_file_in_a_batch_rolls_back(tmp_path, monkeypatch, order):
    """A file the scanner refuses after emitting rows (and slow arguments) leaves no trace in the batch."""
    assert isinstance(scan(LATE_REFUSAL), str) and isinstance(scan(SLOW_ARGS), tuple)
    good = [BASIC, SLOW_ARGS, ACCEPTED["images"], ACCEPTED["args_floats"]]
    bad = [LATE_REFUSAL, REFUSED["repeated_entry_id"], REFUSED["deep_nesting_in_args"]]
    layout = {"middle": [good[0], bad[0], good[1]], "first": [bad[0], good[1], good[2]],
              "last": [good[1], good[0], bad[0]], "all_refused": bad,
              "alternating": [good[0], bad[0], good[1], bad[1], good[2], bad[2], good[3]]}[order]
    paths = []
    for i, data in enumerate(layout):
        p = tmp_path / f"f{i:02d}.jsonl"
        p.write_bytes(data)
        paths.append(str(p))
    monkeypatch.delenv("SESSIONLAB_NATIVE", raising=False)
    together = _file_results(paths)
    for res, path in zip(together, paths):
        _same_result(res, _file_results([path])[0])
    assert all(r[1] for r, d in zip(together, layout) if d in good)
    assert_paths_agree(tmp_path, monkeypatch)


@needs_scan
def test_scanner_reuse_after_refusal():
    """add() after a refusal appends after the rows kept so far; finish() resets the scanner."""
    sc = _scan.Scanner(True)
    a = sc.add(BASIC)
    assert isinstance(sc.add(LATE_REFUSAL), str)
    b = sc.add(SLOW_ARGS)
    out = sc.finish()
    assert out["rows"] == a[0] + b[0] and out["block_rows"] == a[1] + b[1]
    assert len(out["slow"]) == 8 * 4 * 1  # one slow tool call (a float in its arguments)
    assert len(out["line_starts"]) == 8 * out["rows"]  # (the refused file's rolled back too)
    again = sc.finish()
    assert again["rows"] == 0 and again["slow"] == b"" and again["line_starts"] == b""
    assert isinstance(sc.add(memoryview(BASIC)), tuple)  # any buffer
    with pytest.raises(TypeError):
        sc.add("not bytes")


@needs_scan
def test_scanner_shared_by_threads_refuses_cleanly():
    """Two threads on one Scanner: the second gets a RuntimeError, never a crash or a torn row."""
    sc = _scan.Scanner(True)
    big = pi_file(*START, *[user("x" * 500) for _ in range(5000)])
    done, errors = [], []

    def work():
        for _ in range(4):
            try:
                done.append(sc.add(big)[0])
            except RuntimeError:
                errors.append(1)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(done) + len(errors) == 12 and done
    assert sc.finish()["rows"] == sum(done)


@needs_scan
def test_scanner_reinit_while_scanning_is_refused():
    """``__init__`` while another thread scans would free the buffers being written: an error."""
    sc = _scan.Scanner(True)
    big = pi_file(*START, *[user("x" * 2000) for _ in range(20000)])  # ~40 MB: a scan long enough to meet
    for _attempt in range(5):
        out: list = []
        refused = 0
        t = threading.Thread(target=lambda out=out: out.append(sc.add(big)))
        t.start()
        while t.is_alive():
            try:
                sc.__init__(True)
            except RuntimeError as exc:
                assert "while it scans" in str(exc)
                refused += 1
        t.join()
        if refused:
            break
    assert refused and isinstance(out[0], tuple) and out[0][0] == len(START) + 20000


@needs_scan
def test_scanner_without_init_does_not_crash():
    sc = _scan.Scanner.__new__(_scan.Scanner)
    assert isinstance(sc.add(BASIC), tuple) and isinstance(sc.add(b"{"), str)
    assert sc.finish()["rows"] == 6
    sc.__init__(False)
    assert isinstance(sc.add(BASIC), tuple) and sc.finish()["blocks"] == []


def test_thread_pool_equals_serial(synth_dir, tmp_path, monkeypatch):
    """Threads (the scanner releases the GIL) give what one thread gives, refused files included."""
    for f in synth_dir.glob("*.jsonl"):
        shutil.copy(f, tmp_path / f.name)
    for name in ("late_refusal", "garbage", "bom", "deep_nesting_in_args"):
        (tmp_path / f"z_{name}.jsonl").write_bytes(LATE_REFUSAL if name == "late_refusal" else REFUSED[name])
    for i, data in enumerate([BASIC, SLOW_ARGS, ACCEPTED["escaped_ids"]]):
        (tmp_path / f"y{i}.jsonl").write_bytes(data)
    monkeypatch.delenv("SESSIONLAB_NATIVE", raising=False)
    serial = {k: fn(tmp_path, max_workers=1) for k, fn in _LOADERS.items()}
    monkeypatch.setattr(_load, "_SERIAL_BYTES", 0)
    monkeypatch.setattr(_load, "_CHUNK_BYTES", (30_000, 30_000))  # a few files per chunk, many chunks
    pooled = {k: fn(tmp_path, max_workers=2) for k, fn in _LOADERS.items()}
    assert not _differences(serial, pooled)
    monkeypatch.setenv("SESSIONLAB_NATIVE", "0")
    monkeypatch.setattr(_load, "_SERIAL_BYTES", 4_000_000)
    assert not _differences(serial, {k: fn(tmp_path, max_workers=1) for k, fn in _LOADERS.items()})


_LOADERS = {
    "entries": lambda s, **k: entries_table(s, on_bad_lines="skip", **k),
    "blocks": lambda s, **k: blocks_table(s, on_bad_lines="skip", **k),
    # (the loader column names the path: native on and off differ there by design)
    "sessions": lambda s, **k: sessions_table(s, on_bad_lines="skip", **k).drop_columns(["loader"]),
    "issues": lambda s, **k: issues_table(s, **k),
}


@needs_scan
def test_a_failing_batch_falls_back_to_the_other_paths(monkeypatch):
    """Should building a batch's tables ever fail, its files are loaded again on the other paths."""
    paths = [str(p) for p in GENERATED]
    expected = _file.load_chunk(paths, True)

    def boom(self):
        raise RuntimeError("test")

    monkeypatch.setattr(_native.NativeBatch, "finish", boom)
    got = _file.load_chunk(paths, True)
    assert [r.path for r in got] == paths
    for r, e in zip(got, expected):
        assert (r.session | {"loader": None}, r.issues) == (e.session | {"loader": None}, e.issues)
        assert r.entries.equals(e.entries) and r.blocks.equals(e.blocks)
        assert (r.native_error is not None) == (e.loader == "native")


@needs_scan
def test_scanner_init_twice_starts_over():
    """A second ``__init__`` (not while scanning) drops what was scanned and may change want_blocks."""
    sc = _scan.Scanner(True)
    assert isinstance(sc.add(BASIC), tuple)
    sc.__init__(False)
    sc.__init__(False)
    n = sc.add(BASIC)[0]
    out = sc.finish()
    assert out["rows"] == n and out["blocks"] == [] and out["block_rows"] == 0
