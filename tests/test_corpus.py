"""load() and its Corpus: one read gives every table, the *_table functions are its tables, and the
path that loaded each file is recorded (and the native path does not fail on the sample files)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pyarrow as pa
import pytest

import sessionlab as sl
from sessionlab import Corpus, NativeLoaderWarning, load
from sessionlab.tables import _load, _native, as_entries
from tests._native_cases import needs_scan
from tests._tables_ref import SAMPLES

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"
PI = Path(__file__).parent / "data" / "pi"
CLEAN_V3 = [p for p in SAMPLES if "synthetic" not in p.parts and "real" not in p.parts]
ORPHAN = "00000026"  # the clean sample with a dangling parent: both fast paths refuse it


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load(PI, on_bad_lines="skip")


def test_tables_are_the_table_functions(corpus):
    assert corpus.entries.equals(sl.entries_table(PI, on_bad_lines="skip"))
    assert corpus.sessions.equals(sl.sessions_table(PI, on_bad_lines="skip"))
    assert corpus.blocks.equals(sl.blocks_table(PI, on_bad_lines="skip"))
    assert corpus.issues.equals(sl.issues_table(PI))
    assert corpus.files == sl.tables.find_files(PI) and set(map(str, SAMPLES)) < set(corpus.files)  # (+ v4)
    assert corpus.entries_df().shape == (corpus.entries.num_rows, corpus.entries.num_columns)
    assert list(corpus.sessions_df().columns) == corpus.sessions.column_names


def test_one_read_gives_entries_sessions_and_issues(monkeypatch):
    calls = []
    real = _load.load_files

    def counting(*args, **kwargs):
        calls.append(kwargs.get("want_blocks", False))
        return real(*args, **kwargs)

    monkeypatch.setattr("sessionlab.tables.corpus.load_files", counting)
    c = load(PI, on_bad_lines="skip")
    c.entries, c.sessions, c.issues, c.labels  # noqa: B018
    assert calls == [False]
    c.blocks  # noqa: B018  (blocks are read on first access only)
    assert calls == [False, True]


def test_issues_are_kept_whatever_on_bad_lines(corpus):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sl.BadLinesWarning)
        warned = load(PI, on_bad_lines="warn")
    assert warned.issues.equals(corpus.issues)
    assert corpus.issues.num_rows > 0
    # every damaged file's issue count is on its sessions row too
    per_file = dict(zip(*corpus.sessions.select(["file", "issue_count"]).to_pydict().values()))
    counts: dict[str, int] = {}
    for f in corpus.issues.column("file").to_pylist():
        counts[f] = counts.get(f, 0) + 1
    for f, n in counts.items():
        if f in per_file:
            assert per_file[f] == n


def test_loader_column_names_the_path(corpus):
    loaders = dict(zip(*corpus.sessions.select(["file", "loader"]).to_pydict().values()))
    for p in SAMPLES:
        want = "objects" if (p not in CLEAN_V3 or ORPHAN in p.name) else (
            "native" if _native.native_available() else "msgspec")
        assert loaders.get(str(p), want) == want, p.name


@needs_scan
def test_clean_v3_samples_take_the_native_path():
    c = load(CLEAN_V3, on_bad_lines="skip")
    loaders = c.sessions.column("loader").to_pylist()
    assert loaders == ["objects" if ORPHAN in p.name else "native" for p in CLEAN_V3]


def test_without_native_the_msgspec_path_loads_clean_files(monkeypatch):
    monkeypatch.setenv("SESSIONLAB_NATIVE", "0")
    c = load(CLEAN_V3, on_bad_lines="skip")
    assert c.sessions.column("loader").to_pylist() == ["objects" if ORPHAN in p.name else "msgspec"
                                                       for p in CLEAN_V3]


@needs_scan
def test_sample_files_never_make_the_native_path_fail():
    with warnings.catch_warnings():
        warnings.simplefilter("error", NativeLoaderWarning)
        warnings.simplefilter("ignore", sl.BadLinesWarning)
        for source in (PI, DATA):
            load(source, on_bad_lines="warn").entries  # noqa: B018
            load(source, on_bad_lines="skip", max_workers=1).blocks  # noqa: B018


@needs_scan
@pytest.mark.parametrize("where", ["add", "finish"])
def test_a_native_failure_warns_once_and_loses_nothing(monkeypatch, where):
    ref = load(CLEAN_V3, on_bad_lines="skip")

    def boom(self, *args):
        raise RuntimeError("scanner bug")

    monkeypatch.setattr(_native.NativeBatch, where, boom)
    with pytest.warns(NativeLoaderWarning, match="scanner bug") as record:
        got = load(CLEAN_V3, on_bad_lines="skip")
    assert len([w for w in record if issubclass(w.category, NativeLoaderWarning)]) == 1
    assert got.entries.equals(ref.entries)
    assert "native" not in got.sessions.column("loader").to_pylist()


def test_labels_are_pi_get_label():
    c = load(DATA, agents=["pi"])  # (pi's session API reads pi files only)
    got = {(r["file"], r["target_id"]): r["label"] for r in c.labels.to_pylist()}
    assert got  # the sample sessions carry labels
    want = {}
    for f in c.files:
        s = sl.open_session(f, on_bad_lines="skip")
        for e in sl.read_session(f, on_bad_lines="skip").entries:
            if isinstance(e.id, str) and s.get_label(e.id):
                want[(f, e.id)] = s.get_label(e.id)
    assert got == want


def test_as_entries_takes_a_corpus_a_table_or_pandas(corpus):
    assert as_entries(corpus) is corpus.entries
    assert as_entries(corpus.entries) is corpus.entries
    assert as_entries(corpus.entries_df()).equals(corpus.entries)
    with pytest.raises(TypeError, match="Corpus"):
        as_entries([1, 2])


def test_every_analysis_takes_a_corpus(corpus):
    t = corpus.entries
    assert sl.contexts(corpus).equals(sl.contexts(t))
    assert sl.usage_by(corpus, by="model").equals(sl.usage_by(t, by="model"))
    assert sl.branch_costs(corpus).equals(sl.branch_costs(t))
    assert sl.find_cut_points(corpus).equals(sl.find_cut_points(t))
    sid = corpus.sessions.column("session_id")[0].as_py()
    assert set(sl.session_tree(corpus, session_id=sid)) == set(sl.session_tree(t, session_id=sid))


def test_bad_on_bad_lines_is_refused():
    with pytest.raises(ValueError, match="on_bad_lines"):
        load(PI, on_bad_lines="ignore")  # type: ignore[arg-type]


def test_empty_source_gives_empty_tables(tmp_path):
    c = load(tmp_path)
    assert c.entries.num_rows == c.sessions.num_rows == c.issues.num_rows == c.labels.num_rows == 0
    assert c.entries.schema == sl.tables.ENTRY_SCHEMA
    assert isinstance(c.blocks, pa.Table) and c.blocks.num_rows == 0
