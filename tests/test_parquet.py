"""Parquet export read back by pyarrow, DuckDB and Polars; DuckDB queries the Arrow table."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sessionlab.tables import blocks_table, entries_table, sessions_table, to_parquet

DATA = Path(__file__).parent / "data" / "pi"


@pytest.fixture(scope="module")
def entries():
    return entries_table(DATA, on_bad_lines="skip")


def test_round_trip_pyarrow_duckdb_polars(entries, tmp_path):
    duckdb = pytest.importorskip("duckdb")
    pl = pytest.importorskip("polars")
    files = to_parquet(entries, tmp_path / "ds", rows_per_file=500)
    assert len(files) > 1
    back = pq.read_table(tmp_path / "ds")
    assert back.equals(entries)
    # each session lives in one file
    seen = {}
    for f in files:
        for s in set(pq.read_table(f).column("file").to_pylist()):
            assert s not in seen
            seen[s] = f
    glob = str(tmp_path / "ds" / "*.parquet")
    con = duckdb.connect()
    d = con.sql(f"SELECT * FROM read_parquet('{glob}')").to_arrow_table()
    assert d.cast(entries.schema).equals(entries)
    p = pl.read_parquet(glob).to_arrow()
    assert p.cast(entries.schema).equals(entries)


def test_source_and_other_tables(tmp_path):
    files = to_parquet([DATA / "generated" / "synthetic" / "synthetic-v2-hookmessage.jsonl", DATA / "real"], tmp_path / "e")
    assert pq.read_table(tmp_path / "e").num_rows == entries_table(list(files and [DATA / "generated" / "synthetic" / "synthetic-v2-hookmessage.jsonl", DATA / "real"])).num_rows
    for t in (sessions_table(DATA, on_bad_lines="skip"), blocks_table(DATA, on_bad_lines="skip")):
        to_parquet(t, tmp_path / "t")
        assert pq.read_table(tmp_path / "t").equals(t)


def test_duckdb_queries_the_arrow_table(entries):
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    con.register("entries", entries)
    got = con.sql("SELECT type, count(*) AS n, sum(est_tokens) AS est FROM entries GROUP BY type ORDER BY type").fetchall()
    ref = entries.group_by("type").aggregate([("type", "count"), ("est_tokens", "sum")]).sort_by("type")
    assert got == list(zip(ref["type"].to_pylist(), ref["type_count"].to_pylist(), ref["est_tokens_sum"].to_pylist()))
    # replacement scan on a local variable, no registration
    tbl = entries  # noqa: F841
    assert duckdb.sql("SELECT count(*) FROM tbl").fetchall()[0][0] == entries.num_rows
    assert isinstance(entries, pa.Table)


def test_contexts_of_a_parquet_round_trip_need_no_session_file(tmp_path):
    """pi 1.6's rare edit cases (a removed system message, an edited retained tail) from the
    Parquet dataset alone: the session files are gone."""
    from sessionlab import contexts
    from sessionlab.tables import read_parquet
    from tests._edited import edited_tail, expected, got, removed_system

    src = tmp_path / "src"
    src.mkdir()
    want = {}
    for make in (removed_system, edited_tail):
        entries, _ = make(src / f"{make.__name__}.jsonl")
        want[make.__name__] = expected(entries)
    table = entries_table(src)
    to_parquet(table, tmp_path / "ds")
    for f in src.iterdir():
        f.unlink()
    back = read_parquet(tmp_path / "ds")
    assert back.equals(table)
    rows = contexts(back, at="entries")
    for name, values in want.items():
        mine = rows.filter(pa.compute.match_substring(rows["file"], name))
        assert got(mine) == values
