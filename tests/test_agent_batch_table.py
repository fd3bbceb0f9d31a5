"""A batch's entries table built at once (rows of many files turned into columns together) equals
the files' rows laid out one by one, whatever mix of row and column files the batch holds."""

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionlab.agents._chain import _ROW_NAMES
from sessionlab.pi.io.formats import AgentFile
from sessionlab.tables._agents import files_table
from sessionlab.tables._arrays import parse_timestamps

IDS = st.sampled_from(["a", "b", "c", "d"])
ROW = st.fixed_dictionaries({
    # (a null id too: never anyone's parent)
    "entry_id": st.one_of(IDS, IDS, st.none()), "parent_id": st.one_of(st.none(), IDS),
    "timestamps": st.one_of(st.none(), st.sampled_from(["2026-01-02T03:04:05.678Z", "2026-03-01T00:00:00Z"])),
    "est_chars": st.one_of(st.none(), st.integers(0, 50)), "input_tokens": st.one_of(st.none(), st.integers(0, 9)),
    "model": st.one_of(st.none(), st.sampled_from(["m1", "m2"])), "role": st.sampled_from(["user", "assistant"])})
FILE = st.tuples(st.lists(ROW, max_size=5), st.booleans())


def _file(k: int, rows: list[dict], as_rows: bool) -> tuple[AgentFile, dict]:
    af = AgentFile(path=f"f{k}", agent="qwen", n=len(rows))
    if as_rows:  # (a chain reader's form)
        af.rows = [tuple(r.get(c) for c in _ROW_NAMES) for r in rows]
        af.row_names = _ROW_NAMES
    else:  # (a reader that builds columns; the estimate already in tokens, a column no row has left out)
        keys = {k for r in rows for k, v in r.items() if v is not None} | {"entry_id", "parent_id"}
        af.columns = {("est_tokens" if c == "est_chars" else c):
                      [(-(-r[c] // 4) if c == "est_chars" and r[c] is not None else r[c]) for r in rows] for c in keys}
    return af, {"session_id": f"s{k}"}


def _plain(files: list[tuple[list[dict], bool]]) -> dict[str, list]:
    out: dict[str, list] = {c: [] for c in ("session_id", "file", "entry_id", "entry_index", "parent_index",
                                             "est_tokens", "input_tokens", "model", "role", "timestamps")}
    for k, (rows, _) in enumerate(files):
        ids = [r["entry_id"] for r in rows]
        for i, r in enumerate(rows):
            last = [j for j, e in enumerate(ids) if e == r["parent_id"]]
            out["session_id"].append(f"s{k}")
            out["file"].append(f"f{k}")
            out["entry_id"].append(r["entry_id"])
            out["entry_index"].append(i)
            out["parent_index"].append(last[-1] if r["parent_id"] is not None and last else None)
            out["est_tokens"].append(None if r["est_chars"] is None else -(-r["est_chars"] // 4))
            for c in ("input_tokens", "model", "role", "timestamps"):
                out[c].append(r[c])
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(FILE, max_size=6))
def test_batch_table_equals_the_rows_one_by_one(files):
    t = files_table([_file(k, rows, as_rows) for k, (rows, as_rows) in enumerate(files)])
    want = _plain(files)
    assert t.num_rows == len(want["entry_id"])
    for c, values in want.items():
        if c == "timestamps":
            assert t["timestamp"].equals(pa.chunked_array([parse_timestamps(pa.array(values, pa.string()))]))
        else:
            assert t[c].to_pylist() == values, c
