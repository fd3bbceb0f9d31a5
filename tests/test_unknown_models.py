"""The load's ``unknown_model`` issues (one per model without a price, on its first counted call,
with the count of its calls), held to a plain loop over the calls on random loads."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionlab.tables._agents import _unknown_models
from sessionlab.tables._file import FileResult

MODELS = st.sampled_from([None, "", "nope-1", "nope-2", "gpt-x"])
CALL = st.tuples(MODELS, st.booleans(), st.booleans())  # (model, has usage, no price found)


def _agent(k: int) -> str:
    return "pi" if k % 3 == 2 else "amp"  # (pi's calls are never priced here: its unpriced calls are not asked)


def _results(files: list[list[tuple]]) -> list[FileResult]:
    out = []
    for k, calls in enumerate(files):
        t = pa.table({"agent": pa.array([_agent(k)] * len(calls), pa.string()),"input_tokens": pa.array([5 if used else None for _, used, _ in calls], pa.int64()),
                      "cost_source": pa.array(["unknown" if unknown else "priced" for _, _, unknown in calls], pa.string()),
                      "model": pa.array([m for m, _, _ in calls], pa.string()),
                      "line_no": pa.array(range(1, len(calls) + 1), pa.int64()),
                      "entry_id": pa.array([f"e{i}" for i in range(len(calls))])})
        r = FileResult(path=f"f{k}", entries=t, session={"agent": _agent(k)})
        out.append(r)
    return out


def _plain(files: list[list[tuple]]) -> list[tuple]:
    first: dict[str, tuple] = {}
    counts: dict[str, int] = {}
    for k, calls in enumerate(files):
        for i, (model, used, unknown) in enumerate(calls):
            if used and unknown and _agent(k) != "pi":
                name = model or "(none)"
                first.setdefault(name, (f"f{k}", i + 1, f"e{i}"))
                counts[name] = counts.get(name, 0) + 1
    return [(*where, f"no price for model {m!r} ({counts[m]} calls in this load): their cost_usd is null")
            for m, where in first.items()]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(CALL, max_size=6), max_size=6))
def test_one_issue_per_unpriced_model_on_its_first_call(files):
    results = _results(files)
    _unknown_models(results)
    got = [(i.path, i.line, i.entry_id, i.message) for r in results for i in r.issues]
    assert sorted(got) == sorted(_plain(files))
    order = [i.message for r in results for i in r.issues]  # (issues follow the load's order)
    assert order == [w[3] for w in _plain(files)]
