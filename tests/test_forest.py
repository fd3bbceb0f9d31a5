"""sessionlab.tables.forest: the public tree engine against plain Python walks, and its weak per-table cache."""

from __future__ import annotations

import gc
import random
import weakref

import numpy as np
import pyarrow as pa
import pytest

from sessionlab.tables import entries_table, forest, load
from sessionlab.tables.forest import (
    Forest,
    arrow_indices,
    at_load,
    doubling_nearest,
    doubling_sum,
    forest_of,
    per_table,
    to_numpy,
)

SAMPLES = "tests/data/pi/generated/sessions"


def random_table(seed: int) -> pa.Table:
    """A few files of entries whose parents are random: earlier rows, later rows (so cycles), ids
    that are missing or duplicated, ``leaf`` records."""
    rng = random.Random(seed)
    rows = []
    for f in range(rng.randint(1, 4)):
        n = rng.randint(0, 30)
        ids = [f"e{rng.randint(0, n + 3)}" if rng.random() < 0.15 else f"e{i}" for i in range(n)]
        for i in range(n):
            r = rng.random()
            if r < 0.1 or i == 0:
                pid = None
            elif r < 0.15:
                pid = "missing"
            elif r < 0.2:
                pid = ids[rng.randrange(n)]  # anywhere: may close a cycle
            else:
                pid = ids[rng.randrange(i)] if rng.random() < 0.3 else ids[i - 1]
            typ = "leaf" if rng.random() < 0.05 else "message"
            rows.append({"file": f"f{f}.jsonl", "entry_id": ids[i], "parent_id": pid, "type": typ})
    return pa.Table.from_pylist(rows, schema=pa.schema([("file", pa.string()), ("entry_id", pa.string()),
                                                         ("parent_id", pa.string()), ("type", pa.string())]))


def plain_parents(table: pa.Table) -> tuple[list[int], list[bool]]:
    """(parent row, cyclic) by the object model's rules, one row at a time."""
    rows = table.to_pylist()
    index: dict[tuple[str, str], int] = {}
    for i, r in enumerate(rows):  # the later row wins a duplicated id; leaf records are no parents
        if r["type"] != "leaf":
            index[(r["file"], r["entry_id"])] = i
    parent = [index.get((r["file"], r["parent_id"]), -1) if r["parent_id"] is not None else -1 for r in rows]
    cyclic = []
    for i in range(len(rows)):
        seen, x = set(), i
        while x >= 0 and x not in seen:
            seen.add(x)
            x = parent[x]
        cyclic.append(x >= 0)
    return [-1 if c else p for p, c in zip(parent, cyclic)], cyclic


def path(parent: list[int], i: int) -> list[int]:
    out = []
    while i >= 0:
        out.append(i)
        i = parent[i]
    return out


@pytest.mark.parametrize("seed", range(40))
def test_forest_walks_match_a_plain_walk(seed):
    table = random_table(seed)
    n = table.num_rows
    f = Forest(table)
    parent, cyclic = plain_parents(table)
    assert f.parent.tolist() == parent
    assert f.cyclic.tolist() == cyclic
    assert f.depth.tolist() == [len(path(parent, i)) - 1 for i in range(n)]
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 5, n)
    assert f.path_sum(values).tolist() == [int(sum(values[j] for j in path(parent, i))) for i in range(n)]
    mask = rng.random(n) < 0.3
    assert f.nearest(mask).tolist() == [next((j for j in path(parent, i) if mask[j]), -1) for i in range(n)]
    a, b = rng.integers(-1, max(n, 1), 50), rng.integers(-1, max(n, 1), 50)
    if n:
        assert f.is_ancestor(a, b).tolist() == [bool(x >= 0 and y >= 0 and x in path(parent, y))
                                                for x, y in zip(a, b)]
        cum = f.path_sum(values)
        q = rng.integers(0, n, 30)
        lim = rng.integers(-1, 12, 30)
        want = [next((j for j in path(parent, i) if cum[j] <= lo), -1) for i, lo in zip(q, lim)]
        assert f.deepest_at_most(cum, q, lim).tolist() == want


def test_forest_of_a_loaded_table_uses_its_parent_index():
    table = entries_table(SAMPLES, on_bad_lines="skip")
    f = forest_of(table)
    plain = Forest(table.drop_columns(["entry_index", "parent_index"]))  # ids mapped by lookup instead
    assert f.parent.tolist() == plain.parent.tolist()
    assert f.parent.tolist() == plain_parents(table.select(["file", "entry_id", "parent_id", "type"]))[0]
    assert f is forest_of(table) is Forest.of(table)


@pytest.mark.parametrize("seed", range(10))
def test_doubling_walks_on_any_parent_array(seed):
    rng = np.random.default_rng(seed)
    n = 60
    parent = np.array([-1 if i == 0 or rng.random() < 0.1 else rng.integers(0, i) for i in range(n)], np.int64)
    order = rng.permutation(n)  # rows in any order
    inv = np.argsort(order)
    parent = np.where(parent[order] >= 0, inv[np.maximum(parent[order], 0)], -1)
    values = rng.integers(0, 9, n)
    near = np.where(rng.random(n) < 0.2, rng.integers(0, 100, n), -1)
    plist = parent.tolist()
    assert doubling_sum(parent, values).tolist() == [int(sum(values[j] for j in path(plist, i))) for i in range(n)]
    assert doubling_nearest(parent, near).tolist() == [
        next((int(near[j]) for j in path(plist, i) if near[j] >= 0), -1) for i in range(n)]


def test_per_table_shares_a_build_per_table_object():
    calls = []

    def build(t):
        calls.append(t.num_rows)
        return object()

    t = random_table(1)
    first = per_table(build, t)
    assert per_table(build, t) is first
    other = t.slice(0)  # the same rows, another object: its own build
    assert per_table(build, other) is not first
    assert len(calls) == 2


@pytest.mark.parametrize("rules", ["pi-1.6", "pi-0.58"])
def test_the_cache_does_not_keep_tables_alive(rules):
    import sessionlab as sl

    t = entries_table(SAMPLES, on_bad_lines="skip", rules=rules)
    f = Forest.of(t)
    # every public function that caches per-table arrays
    sl.contexts(t, at="calls")
    sl.context_members(t, at="leaves")
    sl.find_cut_points(t, at="calls")
    sl.simulate_compaction(t, [sl.NeverCompact()])
    sl.usage_by(t)
    sl.branch_costs(t)
    sl.cache_efficiency(t)
    key = id(t)
    assert key in forest._CACHE
    ref = weakref.ref(t)
    del t
    gc.collect()
    assert ref() is None  # neither the cache nor the cached arrays held it
    assert key not in forest._CACHE
    with pytest.raises(ReferenceError):
        f.table  # noqa: B018


def test_a_reused_id_never_serves_a_dead_tables_arrays():
    seen = []

    def build(t):
        seen.append(t)
        return t.num_rows

    for seed in range(20):  # new tables, often at a freed table's address
        t = random_table(seed)
        assert per_table(build, t) == t.num_rows
        assert seen[-1] is t
        seen.clear()
        del t


def test_builders_registered_at_load_run_with_the_load():
    calls = []

    def build(t):
        calls.append(id(t))
        return len(calls)

    at_load(build)
    try:
        corpus = load(SAMPLES, on_bad_lines="skip", cache=False)
        entries = corpus.entries
        assert calls == [id(entries)]
        assert per_table(build, entries) == 1  # built with the load, not again
        assert calls == [id(entries)]
    finally:
        forest._AT_LOAD.remove(build)


@pytest.mark.parametrize("typ", [pa.int64(), pa.int32(), pa.float64(), pa.bool_()])
def test_to_numpy_reads_the_buffers_as_pyarrow_would(typ):
    rng = random.Random(str(typ))
    chunks = []
    for _ in range(4):
        vals = [None if rng.random() < 0.3 else (rng.random() < 0.5 if typ == pa.bool_() else rng.randint(-9, 9))
                for _ in range(rng.randint(0, 40))]
        chunks.append(pa.array(vals, typ).slice(rng.randint(0, 3)))  # offsets too
    col = pa.chunked_array(chunks, typ)
    fill = False if typ == pa.bool_() else 7
    want = [fill if v is None else v for v in col.to_pylist()]
    assert to_numpy(col, fill).tolist() == want
    assert to_numpy(chunks[1], fill).tolist() == [fill if v is None else v for v in chunks[1].to_pylist()]
    assert to_numpy(pa.chunked_array([pa.nulls(3)]), 5).tolist() == [5, 5, 5]


def test_arrow_indices_with_and_without_nulls():
    rows = np.array([3, -1, 0, 7, -1, 2] * 3)
    assert arrow_indices(rows).to_pylist() == rows.tolist()
    assert arrow_indices(rows, rows < 0).to_pylist() == [None if r < 0 else r for r in rows.tolist()]
