"""The Dask path equals the local load on every agent's files, however small the partitions.

The load compares usage across files (Claude Code subagent replays, Codex fork replays): files that
belong together share a partition. Run on Dask's synchronous scheduler (the partitioning is what is
tested; tests/test_dask.py runs the same functions on a two-process cluster)."""

from __future__ import annotations

from pathlib import Path

import pytest

dask = pytest.importorskip("dask", reason="the [dask] extra is not installed")
pytest.importorskip("dask.dataframe", reason="the [dask] extra (dask[dataframe]) is not installed")

import sessionlab as sl  # noqa: E402
from sessionlab import dask as sd  # noqa: E402
from sessionlab.tables.forest import as_table  # noqa: E402

ROOT = Path(__file__).parent.parent
SOURCES = {"data": ROOT / "data", "claude": ROOT / "tests" / "data" / "claude",
           "codex": ROOT / "tests" / "data" / "codex"}


@pytest.fixture(scope="module", params=sorted(SOURCES))
def pair(request):
    with dask.config.set(scheduler="sync"):
        src = SOURCES[request.param]
        local = sl.entries_table(src, on_bad_lines="skip")
        ddf = sd.load_dask(src, files_per_partition=1)
        yield request.param, local, ddf


def test_every_agent_loads_the_same_table(pair):
    name, local, ddf = pair
    assert ddf.npartitions > 1
    assert set(local["agent"].to_pylist()) >= ({"pi", "claude-code", "codex"} if name == "data" else {name.replace(
        "claude", "claude-code")})
    assert as_table(ddf.compute()).equals(local)


@pytest.mark.parametrize("by", [["day", "model"], "session", ["session_id", "branch"]])
def test_usage_equals_local(pair, by):
    _, local, ddf = pair
    want = sl.usage_by(local, by=by)
    got = sd.usage_by(ddf, by=by)
    assert got.drop(["cost_usd"]).equals(want.drop(["cost_usd"]))
    assert got["cost_usd"].to_pylist() == pytest.approx(want["cost_usd"].to_pylist(), rel=1e-12, abs=1e-12)


def test_contexts_equal_local(pair):
    _, local, ddf = pair
    want = sl.contexts(local)
    got = as_table(sd.contexts(ddf).compute())
    assert got.num_rows == want.num_rows > 0 and got.cast(want.schema).equals(want)


def test_a_claude_project_and_a_codex_thread_stay_in_one_partition():
    files = [(str(p), p.stat().st_size) for p in sorted((ROOT / "data").rglob("*.jsonl"))]
    units = sd._units(files, None)
    groups = sd._groups(files, 1, 0, units)
    where = {f: i for i, g in enumerate(groups) for f in g}
    sub = [f for f, _ in files if "/subagents/" in f]
    assert sub and all(where[f] == where[f.split("/subagents/")[0].rsplit("/", 1)[0] + "/"
                                          + f.split("/subagents/")[0].rsplit("/", 1)[1] + ".jsonl"] for f in sub)
