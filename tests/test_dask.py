"""The Dask path on a two-process LocalCluster equals the local functions, table for table."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

pytest.importorskip("dask.dataframe", reason="the [dask] extra (dask[dataframe]) is not installed")
distributed = pytest.importorskip("distributed", reason="the [dask] extra (distributed) is not installed")

import sessionlab as sl  # noqa: E402
from sessionlab import dask as sd  # noqa: E402
from sessionlab.synth import generate_corpus  # noqa: E402
from sessionlab.tables.forest import as_table  # noqa: E402

ROOT = Path(__file__).parent.parent
SOURCES = {"data": ROOT / "data", "samples": ROOT / "tests" / "data" / "pi"}


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None,
                                       host="127.0.0.1")
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    out = tmp_path_factory.mktemp("corpus")
    generate_corpus(out, n_sessions=8, target_bytes=1_500_000, seed=3)
    return out


@pytest.fixture(scope="module", params=["data", "samples", "generated"])
def corpus(request, client, generated):
    """(local entries table, Dask entries table) of one source; several partitions each."""
    src = generated if request.param == "generated" else SOURCES[request.param]
    local = sl.entries_table(src, on_bad_lines="skip")
    ddf = sd.load_dask(src, files_per_partition=3)
    assert ddf.npartitions > 1
    return local, ddf


def arrow(ddf) -> pa.Table:
    return as_table(ddf.compute())


def test_load_dask_equals_entries_table(corpus):
    local, ddf = corpus
    assert list(ddf.columns) == sl.tables.ENTRY_SCHEMA.names
    assert all(str(t).endswith("[pyarrow]") for t in ddf.dtypes)
    assert arrow(ddf).equals(local)


def test_sessions_never_span_partitions(corpus):
    _, ddf = corpus
    files = [set(p["file"].unique()) for p in (ddf.get_partition(i).compute() for i in range(ddf.npartitions))]
    assert sum(len(f) for f in files) == len(set().union(*files))


@pytest.mark.parametrize("fn, kwargs", [
    ("contexts", {}), ("contexts", {"at": "leaves"}), ("find_cut_points", {}),
    ("find_cut_points", {"at": "calls", "keep_recent_tokens": 5000}), ("cache_efficiency", {}),
])
def test_row_level_results_equal_local(corpus, fn, kwargs):
    local, ddf = corpus
    want = getattr(sl, fn)(local, **kwargs)
    got = arrow(getattr(sd, fn)(ddf, **kwargs))
    assert got.num_rows == want.num_rows > 0
    assert got.cast(want.schema).equals(want)


@pytest.mark.parametrize("by", ["session_id", "day", ["day", "model"], ["provider", "branch"], "stop_reason"])
def test_usage_by_combines_partial_sums(corpus, by):
    local, ddf = corpus
    want = sl.usage_by(local, by=by, tz="Europe/Vienna")
    got = sd.usage_by(ddf, by=by, tz="Europe/Vienna")
    assert got.schema.equals(want.schema)
    assert got.drop(["cost_usd"]).equals(want.drop(["cost_usd"]))
    assert got["cost_usd"].to_pylist() == pytest.approx(want["cost_usd"].to_pylist(), rel=1e-12, abs=1e-12)


def test_usage_by_day_spans_partitions(client, generated):
    # one partition per file: every day's calls come from several partitions, so concatenating the
    # partial tables would repeat days; the combined table has one row per day
    ddf = sd.load_dask(generated, files_per_partition=1)
    local = sl.entries_table(generated)
    got = sd.usage_by(ddf, by="model")
    assert got["calls"].to_pylist() == sl.usage_by(local, by="model")["calls"].to_pylist()
    assert len(set(got["model"].to_pylist())) == got.num_rows


def test_branch_costs_equal_local(corpus):
    local, ddf = corpus
    assert sd.branch_costs(ddf).equals(sl.branch_costs(local))


@pytest.mark.parametrize("branch, recorded", [("current", "replace"), ("all", "keep")])
def test_simulate_compaction_equals_local(corpus, branch, recorded):
    local, ddf = corpus
    policies = [sl.PiThresholdPolicy(100_000), sl.KeepLastTurnsPolicy(60_000, turns=2), sl.NeverCompact()]
    want = sl.simulate_compaction(local, policies, branch=branch, recorded=recorded)
    got = sd.simulate_compaction(ddf, policies, branch=branch, recorded=recorded)
    assert got.sessions.num_rows == want.sessions.num_rows > 0
    assert got.sessions.equals(want.sessions)
    assert got.calls.equals(want.calls)


def test_parquet_dataset_by_agent_and_date(client, generated, tmp_path):
    duckdb = pytest.importorskip("duckdb")
    pl = pytest.importorskip("polars")
    local = sl.entries_table(generated)
    out = tmp_path / "ds"
    sd.to_parquet(sd.load_dask(generated, files_per_partition=3), out)
    folders = sorted(p.relative_to(out).as_posix() for p in out.glob("agent=*/date=*"))
    days = {d.as_py().date().isoformat() for d in pc.unique(local["timestamp"]) if d.as_py() is not None}
    assert folders and all(f.startswith("agent=pi/date=2026-") for f in folders)
    assert {f.split("date=")[1] for f in folders} <= days
    order = [("file", "ascending"), ("entry_index", "ascending")]
    want = local.sort_by(order)
    # sessionlab, locally and on the cluster
    assert sl.tables.read_parquet(out).sort_by(order).equals(want)
    assert arrow(sd.read_parquet(out)).sort_by(order).equals(want)
    # each session in one folder, one file
    per_file = duckdb.sql(f"SELECT file, count(DISTINCT filename) AS n FROM read_parquet('{out}/**/*.parquet', "
                          "filename=true, hive_partitioning=true) GROUP BY file").fetchall()
    assert len(per_file) == len(set(local["file"].to_pylist())) and {n for _, n in per_file} == {1}
    # DuckDB and Polars see the partition columns
    tok = duckdb.sql(f"SELECT agent, sum(output_tokens) FROM read_parquet('{out}/**/*.parquet', "
                     "hive_partitioning=true) GROUP BY agent").fetchall()
    assert tok == [("pi", pc.sum(local["output_tokens"]).as_py())]
    lf = pl.scan_parquet(f"{out}/**/*.parquet", hive_partitioning=True)
    assert lf.select(pl.len()).collect().item() == local.num_rows
    assert set(lf.select("agent").unique().collect()["agent"].to_list()) == {"pi"}


def test_fsspec_urls(client):
    # a URL goes through fsspec on the workers (copied, loaded, the URL kept in the file column);
    # file:// takes the same path as s3:// or gcs:// would
    src = SOURCES["data"] / "sessions"
    local = sl.entries_table(src)
    got = arrow(sd.load_dask(src.as_uri(), files_per_partition=2))
    urls = sorted(set(got["file"].to_pylist()))
    assert urls == sorted(Path(f).as_uri() for f in set(local["file"].to_pylist()))
    assert got.drop(["file"]).equals(local.drop(["file"]))
    glob = arrow(sd.load_dask(src.as_uri() + "/*/*.jsonl", files_per_partition=2))
    assert glob.drop(["file"]).equals(local.drop(["file"]))


def test_bad_arguments():
    with pytest.raises(ValueError, match="files_per_partition"):
        sd.load_dask(SOURCES["data"], files_per_partition=0)
    with pytest.raises(ValueError, match="on_bad_lines"):
        sd.load_dask(SOURCES["data"], on_bad_lines="warn")
    with pytest.raises(FileNotFoundError):
        sd.load_dask(ROOT / "no-such-folder")


def test_edited_contexts_of_url_partitions_need_no_session_file(client, tmp_path):
    # pi 1.6's rare edit cases on files read through fsspec: the workers' copies are gone and the
    # file column names the URL, so the analysis has the table only
    from tests._edited import edited_tail, expected, got, removed_system

    want = {}
    for make in (removed_system, edited_tail):
        entries, _ = make(tmp_path / f"{make.__name__}.jsonl")
        want[(tmp_path / f"{make.__name__}.jsonl").as_uri()] = expected(entries)
    rows = arrow(sd.contexts(sd.load_dask(tmp_path.as_uri(), files_per_partition=1), at="entries"))
    assert set(rows["file"].to_pylist()) == set(want)
    for url, values in want.items():
        assert got(rows.filter(pc.equal(rows["file"], url))) == values
