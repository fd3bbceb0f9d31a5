"""What-if compaction: replay the recorded calls of every session under many policies at once.

The replay never invents model output: call ``k`` of a branch keeps its recorded output, and its
prompt is what the branch had accumulated by then, minus what the simulated compactions removed.

Per call (all policies at once, arrays shaped policies x calls):

- ``prompt``: the context the call was sent, pi's ``estimateContextTokens`` at its parent;
  ``total``: its usage total after the call (pi's ``calculateContextTokens``). With
  ``recorded="replace"`` (default) the session's own compactions are undone first: each adds back
  what it removed (its ``tokensBefore`` minus the context right after it), so every policy starts
  from the uncompacted conversation; ``recorded="keep"`` leaves them in place and compacts on top.
- a policy compacts after call ``k`` when ``total - removed > trigger_tokens`` and the call ended a
  turn (pi checks after the agent's run ends: a call that is not a tool use, not aborted, not an
  error), or when the next call's prompt would not fit the policy's window (pi's overflow
  recovery: the provider refuses, pi compacts and retries). It keeps what its ``keep`` rule
  names (pi's cut point, the last turns, the last messages: estimated tokens of those messages),
  replaces the rest with a summary of the policy's size, and everything after is that much
  smaller. A compaction breaks the prompt cache.
- cost: each model's prices per token are fitted from the recorded calls (``cost = input * a +
  output * b + cache_read * c + cache_write * d``, least squares); a call reads from the cache what
  the previous call on the branch left (unless a compaction or a model change came between) and
  pays the rest as cache writes (models that wrote cache) or fresh input. So the call after a
  compaction writes its whole prompt to the cache again, and a policy that compacts more often
  pays that more often.
- summary calls: every simulated compaction also pays for the call that writes its summary
  (``summary_calls_cost_usd``, apart from the calls' ``cost_usd``): its prompt is the tokens it
  summarises (``summarized_tokens``: everything but what the keep rule keeps, a previous summary
  included) plus pi's summarisation prompt (``SUMMARY_PROMPT_TOKENS`` in ``_summary_prompt.py``,
  306 tokens), paid as fresh input (pi asks for no caching of it); its output is the summary, at
  the policy's size. Prices are those of the compacting call's model. ``net_saving_usd`` is the
  recorded calls' cost minus both. (pi 1.6 summarises a split turn's prefix in a second call;
  the replay charges one call per compaction.)

Finding the next compaction of every (session, policy) pair is a binary search over a
range-maximum table of the calls, for all pairs at once: Python loops over rounds (the most
compactions any pair makes), each a few dozen array passes over the pairs still compacting, never
over sessions, policies or calls (``_replay.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._arrow import arrow_indices, arrow_table, from_numpy, scalar, strings, to_numpy
from ..analysis import fit_prices, string_codes
from ..analysis.contexts import context_arrays, first_line_of_response
from ..analysis.usage import current_branch_mask
from ..errors import check_option
from ..pi.rules import Rules
from ..tables import Column, columns_doc, schema_of, table_rules_for
from ..tables.corpus import SessionIds, select_sessions
from ..tables.forest import per_table
from ._replay import Policies, Runs, replay
from .cut_points import _arrays, cut_point_rows
from .policies import CompactionPolicy

if TYPE_CHECKING:
    from ..analysis import EstimateCalibration

__all__ = ["SimulationResult", "simulate_compaction", "fit_prices", "SIMULATION_SESSION_COLUMNS",
           "SIMULATION_CALL_COLUMNS"]

_S, _I32, _I64, _F64, _B = pa.string(), pa.int32(), pa.int64(), pa.float64(), pa.bool_()

SIMULATION_SESSION_COLUMNS: tuple[Column, ...] = (
    Column("session_id", _S, "Session id."),
    Column("file", _S, "Session file."),
    Column("leaf_id", _S, "The branch's leaf."),
    Column("policy", _S, "Policy name."),
    Column("policy_index", _I32, "Position of the policy in the list given."),
    Column("context_window", _I64, "The policy's window (null for NeverCompact without one)."),
    Column("calls", _I64, "Calls replayed."),
    Column("compactions", _I64, "Simulated compactions."),
    Column("recorded_compactions", _I64, "Compactions the session really made on this branch."),
    Column("matched_compactions", _I64, "Simulated compactions right after a call the session really "
           "compacted after."),
    Column("peak_context_tokens", _I64, "Largest context (usage total) reached."),
    Column("prompt_tokens", _I64, "Prompt tokens sent, summed over the calls."),
    Column("summarized_tokens", _I64, "Tokens replaced by summaries, summed over the compactions."),
    Column("cost_usd", _F64, "Estimated cost of the calls with fitted per-model prices (the summary calls "
           "are not in it)."),
    Column("summary_calls_cost_usd", _F64, "Estimated cost of the simulated compactions' summary calls: each "
           "sends the tokens it summarises plus pi's summary prompt (SUMMARY_PROMPT_TOKENS) as fresh input and "
           "writes the summary's tokens as output, at the compacting call's model's prices."),
    Column("recorded_cost_usd", _F64, "The calls' recorded cost (the session's own summary calls are not "
           "in it: pi 0.58 does not record them)."),
    Column("net_saving_usd", _F64, "recorded_cost_usd - (cost_usd + summary_calls_cost_usd): what the policy "
           "saves over the recorded calls once its summaries are paid for (negative: it costs more)."),
    Column("overflow_calls", _I64, "Calls whose prompt would not fit the window."),
)
SIMULATION_CALL_COLUMNS: tuple[Column, ...] = (
    Column("session_id", _S, "Session id."),
    Column("leaf_id", _S, "The branch's leaf."),
    Column("policy_index", _I32, "Policy position."),
    Column("at_id", _S, "The assistant call."),
    Column("call_index", _I64, "0-based position of the call on the branch."),
    Column("prompt_tokens", _I64, "Prompt sent at this call under the policy."),
    Column("context_before", _I64, "Context after the call (usage total) before any compaction."),
    Column("context_after", _I64, "Context after the compaction this call triggered (= before when none)."),
    Column("compacted", _B, "Whether the policy compacted after this call."),
    Column("cut_entry_id", _S, "First entry kept by that compaction."),
    Column("recorded_compaction", _B, "Whether the session really compacted after this call."),
    Column("cost_usd", _F64, "Estimated cost of the call under the policy."),
    Column("summary_cost_usd", _F64, "Estimated cost of the summary call of the compaction this call "
           "triggered (0 when none)."),
)


class SimulationResult:
    """``sessions``: one row per (session branch, policy); ``calls``: one row per (branch, policy,
    call), built on first access (it is policies x calls rows long); ``policies``: as given.
    ``sessions_df()`` and ``calls_df()`` are their pandas views; ``compactions`` is the calls
    after which a policy compacted.

    Columns of ``sessions``:

{sessions}

    Columns of ``calls``:

{calls}
    """

    __slots__ = ("sessions", "_calls", "policies")
    columns = {"sessions": SIMULATION_SESSION_COLUMNS, "calls": SIMULATION_CALL_COLUMNS}

    def __init__(self, sessions: pa.Table, calls: pa.Table | Callable[[], pa.Table], policies: tuple = ()) -> None:
        self.sessions = sessions
        self._calls = calls
        self.policies = policies

    @property
    def calls(self) -> pa.Table:
        if callable(self._calls):
            self._calls = self._calls()
        return self._calls

    @property
    def compactions(self) -> pa.Table:
        """The rows of ``calls`` after which the policy compacted (``compacted``): one per simulated
        compaction, what :func:`~sessionlab.compaction_diff` takes as ``simulation=``."""
        return self.calls.filter(self.calls["compacted"])

    def sessions_df(self):
        from ..tables.corpus import to_pandas

        return to_pandas(self.sessions)

    def calls_df(self):
        from ..tables.corpus import to_pandas

        return to_pandas(self.calls)

    def __repr__(self) -> str:
        return f"SimulationResult(sessions={self.sessions.num_rows} rows, policies={len(self.policies)})"


SimulationResult.__doc__ = SimulationResult.__doc__.replace(  # type: ignore[union-attr]
    "{sessions}", columns_doc(SIMULATION_SESSION_COLUMNS, 4)).replace(
    "{calls}", columns_doc(SIMULATION_CALL_COLUMNS, 4))


def simulate_compaction(
    entries,
    policies: Sequence[CompactionPolicy],
    *,
    session_id: SessionIds = None,
    branch: Literal["current", "all"] = "current",
    recorded: Literal["replace", "keep"] = "replace",
    prices: dict[str, tuple[float, float, float, float]] | None = None,
    rules: Rules | None = None,
    estimator: Literal["pi", "calibrated"] | EstimateCalibration = "pi",
) -> SimulationResult:
    """Replay every session's calls under each policy (see the module doc).

    Args:
        entries: a :class:`~sessionlab.Corpus` or its entries table.
        policies: policies to compare (see :mod:`sessionlab.compaction.policies`).
        session_id: replay only this session (or these sessions).
        branch: ``"current"`` replays each session's current branch; ``"all"`` every branch (one
            run per leaf; calls shared by branches count in each).
        recorded: ``"replace"`` undoes the session's own compactions first; ``"keep"`` keeps them.
        prices: per-model prices; default :func:`fit_prices` on all of ``entries`` (also when
            ``session_id`` picks some sessions, so a session's figures do not depend on which
            others are replayed with it).
        rules: whose contexts and cut points: ``"pi-1.6"`` or ``"pi-0.58"`` (default: the table's).
        estimator: how messages are estimated: ``"pi"`` (pi's rule), ``"calibrated"`` (the
            calibrated estimator of :func:`~sessionlab.calibrate_estimate`, fitted on all of
            ``entries`` with nothing held out) or a fitted :class:`~sessionlab.EstimateCalibration`.

    Returns:
        :class:`SimulationResult` with ``sessions`` (columns in ``SIMULATION_SESSION_COLUMNS``) and
        ``calls`` (columns in ``SIMULATION_CALL_COLUMNS``).

    Example:
        >>> policies = [PiThresholdPolicy(200_000), NeverCompact()]
        >>> res = simulate_compaction(load("data/"), policies)  # doctest: +SKIP
        >>> cols = ["session_id", "policy", "compactions", "cost_usd", "net_saving_usd"]
        >>> res.sessions.to_pandas()[cols]  # doctest: +SKIP
    """
    policies = list(policies)
    check_option("branch", branch, ("current", "all"))
    check_option("recorded", recorded, ("replace", "keep"))
    prices = prices if prices is not None else fit_prices(entries)
    table = select_sessions(entries, session_id)
    which = table_rules_for(table, rules)
    if not (isinstance(estimator, str) and estimator == "pi"):
        table = _estimated_by(entries, table, estimator, which)  # type: ignore[arg-type]
    prep = context_arrays(table, which)
    rows = _row_arrays(table, prep, recorded)
    kept_at = _kept_at(table, prep, which, rows.call_rows, sorted({p.keep for p in policies if p.keep[0] != "none"}))
    runs = [(leaf, calls_) for leaf, calls_ in _runs(table, prep.forest, prep, branch) if len(calls_)]
    if not runs:
        empty: list[dict[str, np.ndarray]] = []
        return SimulationResult(_sessions_table(table, empty, policies), _calls_table(table, empty), tuple(policies))
    laid = _lay_out(runs, rows, prices)
    sess, calls_of = replay(laid, _policy_arrays(policies, kept_at, laid.rows))
    # the per-call table (2 million rows for 100 policies on the benchmark corpus) is built when
    # first asked for: comparing policies needs only the sessions table
    return SimulationResult(_sessions_table(table, [sess], policies), lambda: _calls_table(table, [calls_of()]),
                            tuple(policies))


def _estimated_by(entries, table: pa.Table, estimator, rules: Rules) -> pa.Table:
    """``table`` with the messages estimated by ``estimator`` (see :func:`simulate_compaction`)."""
    from ..analysis import EstimateCalibration, calibrate_estimate, calibrated_entries
    from ..errors import ArgumentValueError

    if isinstance(estimator, str) and estimator == "calibrated":
        estimator = calibrate_estimate(entries, holdout=0.0, rules=rules)
    if not isinstance(estimator, EstimateCalibration):
        raise ArgumentValueError("estimator", f"estimator must be 'pi', 'calibrated' or an EstimateCalibration, "
                                 f"not {estimator!r}")
    return calibrated_entries(table, estimator, rules)


@dataclass(frozen=True, slots=True)
class _Rows:
    """Per table row (``n``): what the replay needs of each call, everything uncompacted."""

    call_rows: np.ndarray  # the calls' rows
    prompt: np.ndarray  # the prompt each call was sent
    total: np.ndarray  # its usage total after the call
    can_trigger: np.ndarray  # the call ended a turn with usable usage
    model: np.ndarray  # code of the call's model (-1: none)
    model_names: list[str]
    output: np.ndarray
    cost: np.ndarray  # recorded
    compacted_after: np.ndarray  # the session compacted right after this call


def _np(col, fill, dtype) -> np.ndarray:
    return np.asarray(to_numpy(col, fill), dtype)


def _row_arrays(table: pa.Table, prep, recorded: str) -> _Rows:
    """The per-row quantities of every call (whole table, vectorised)."""
    f = prep.forest
    calls = prep.is_call & ~f.cyclic  # (a streamed Claude Code response is one call)
    call_rows = np.nonzero(calls)[0]
    prompt_full, removed_above = _uncompacted_prompts(table, prep, call_rows, recorded)
    # the context after a call: its usage total; a call without usable usage (aborted, error) adds
    # nothing to what it was sent
    total_full = np.where(prep.usage_source, prep.ctx_tok + removed_above, prompt_full)
    tool_use = _np(pc.equal(table["stop_reason"], scalar("toolUse")), False, bool)
    names, codes = string_codes(table["model"])
    # the call each recorded compaction follows
    near_call = f.nearest(calls)
    comp_after_call = np.zeros(table.num_rows, bool)
    comp_rows = np.nonzero(prep.is_comp & ~f.cyclic)[0]
    if comp_rows.size:
        par = f.parent[comp_rows]
        follows = np.where(par >= 0, near_call[np.maximum(par, 0)], -1)
        comp_after_call[follows[follows >= 0]] = True
    return _Rows(call_rows, prompt_full, total_full, calls & prep.usage_source & ~tool_use, codes, names,
                 _np(table["output_tokens"], 0, np.int64), _np(table["cost_usd"], 0.0, np.float64), comp_after_call)


def _uncompacted_prompts(table: pa.Table, prep, call_rows: np.ndarray, recorded: str) -> tuple[np.ndarray, np.ndarray]:
    """Every call's prompt with the session's own compactions undone (``recorded="replace"``) or
    as recorded, and the tokens those compactions removed above every row."""
    f = prep.forest
    n = table.num_rows
    base = f.parent[first_line_of_response(prep, call_rows)]
    if recorded == "keep":
        prompt_rec = np.zeros(n, np.int64)
        prompt_rec[call_rows] = prep.compute(base)["context_tokens"]
        return prompt_rec, np.zeros(n, np.int64)
    removed_at = np.zeros(n, np.int64)
    comp_rows = np.nonzero(prep.is_comp & ~f.cyclic)[0]
    if comp_rows.size:
        # what the compaction left: its summary and the kept messages, estimated (the usage of a
        # kept assistant message still counts the old, uncompacted context)
        after = prep.compute(comp_rows)["estimate_only"]
        tb = _np(table["tokens_before"], 0, np.int64)[comp_rows]
        removed_at[comp_rows] = np.maximum(tb - after, 0)
    removed_above = f.path_sum(removed_at)
    # the uncompacted prompt: the last usage before the call, uncompacted, plus the estimates
    # of every message after it (pi's estimate on the whole branch, compactions undone)
    u = prep.usage[np.maximum(base, 0)]
    u_ok = (base >= 0) & (u >= 0)
    uu = np.maximum(u, 0)
    bb = np.maximum(base, 0)
    prompt_full = np.zeros(n, np.int64)
    prompt_full[call_rows] = np.where(
        u_ok, prep.ctx_tok[uu] + removed_above[uu] + prep.cum_est[bb] - prep.cum_est[uu],
        np.where(base >= 0, prep.cum_est[bb], 0))
    return prompt_full, removed_above


def _kept_at(table: pa.Table, prep, which: str, call_rows: np.ndarray, kinds) -> dict:
    """Per keep rule: (first kept row, kept tokens) at every call (the branch through the call),
    as arrays over the table's rows."""
    f = prep.forest
    n = table.num_rows
    is_msg = f.isin("type", ("message",))
    msg_est = np.where(is_msg, _np(table["est_tokens"], 0, np.int64), 0)
    cum_msg = f.path_sum(msg_est)  # (pi 0.58's cut arrays have it, but a 1.6 table needs only this)
    before_msg = cum_msg - msg_est  # message tokens above each row
    found: dict[tuple[str, int], tuple[np.ndarray, np.ndarray | None]] = {}
    tokens = [v for k, v in kinds if k == "tokens"]
    if tokens and which == "pi-1.6":  # every value in one pass of what does not depend on it
        from ._cut16 import cut_point_rows_16_keeps
        from .cut_points import _arrays16

        rs = cut_point_rows_16_keeps(per_table(_arrays16, table), call_rows, tokens, prep.compute(call_rows))
        for value, r in zip(tokens, rs):
            found[("tokens", value)] = (r["cut"], None)  # (it keeps the message entries from the cut on)
    elif tokens:
        for value in tokens:
            r = cut_point_rows(_arrays(table), call_rows, value)
            found[("tokens", value)] = (r["cut"], r["kept"])
    for kind in ("turns", "messages"):  # every value of a kind in one search
        values = [v for k, v in kinds if k == kind]
        if values:
            one = is_msg & f.isin("role", ("user",)) if kind == "turns" else is_msg
            found.update(_last_counted(f, one, call_rows, kind, values))
    kept_at: dict[tuple[str, int], tuple[np.ndarray, np.ndarray]] = {}
    for key, (rows, kept) in found.items():
        if kept is None:
            kept = np.where(rows >= 0, cum_msg[call_rows] - before_msg[np.maximum(rows, 0)], cum_msg[call_rows])
        full_rows = np.full(n, -1, np.int64)
        full_kept = np.zeros(n, np.int64)
        full_rows[call_rows] = rows
        full_kept[call_rows] = kept
        kept_at[key] = (full_rows, full_kept)
    return kept_at


def _last_counted(f, one: np.ndarray, call_rows: np.ndarray, kind: str, values: list[int]) -> dict:
    """For each ``value``, the row of the ``value``-th last entry marked by ``one`` on every
    call's branch (-1 when there are fewer): where keeping the last turns or messages starts."""
    counts = f.path_sum(one.astype(np.int64))
    at = counts[call_rows]
    m = len(call_rows)
    limit = np.concatenate([at - v for v in values])
    rows = f.deepest_at_most(counts - one, np.tile(call_rows, len(values)), limit)
    return {(kind, v): (np.where(at >= v, rows[i * m:(i + 1) * m], -1), None) for i, v in enumerate(values)}


def _lay_out(runs: list[tuple[int, np.ndarray]], rows: _Rows, prices: dict) -> Runs:
    """The runs' calls end to end, with what the replay reads of each."""
    gc = np.concatenate([c for _, c in runs])  # the table row of every position
    start = np.concatenate(([0], np.cumsum([len(c) for _, c in runs])[:-1])).astype(np.int64)
    model = rows.model[gc]
    price = np.array([prices.get(m, (0.0, 0.0, 0.0, 0.0)) for m in rows.model_names] + [(0.0, 0.0, 0.0, 0.0)],
                     np.float64).reshape(-1, 4)
    pr = price[np.where(model >= 0, model, len(rows.model_names))].T  # 4 x K
    same_model = np.r_[False, model[1:] == model[:-1]]
    same_model[start] = False
    return Runs(rows=gc, leaf=np.array([leaf for leaf, _ in runs], np.int64), start=start,
                prompt=rows.prompt[gc].astype(np.float64), total=rows.total[gc].astype(np.float64),
                can_trigger=rows.can_trigger[gc], price=pr, same_model=same_model,
                output=rows.output[gc].astype(np.float64), recorded_cost=rows.cost[gc],
                recorded_compaction=rows.compacted_after[gc])


def _policy_arrays(policies: list, kept_at: dict, gc: np.ndarray) -> Policies:
    rules = sorted(kept_at)
    return Policies(
        trigger=np.array([p.trigger_tokens for p in policies], np.float64),
        window=np.array([p.context_window if p.context_window is not None else np.inf for p in policies], np.float64),
        s_fixed=np.array([p.summary.tokens if p.summary.tokens is not None else -1 for p in policies], np.float64),
        s_frac=np.array([p.summary.fraction or 0.0 for p in policies], np.float64),
        s_cap=np.array([p.summary.max_tokens if p.summary.max_tokens is not None else np.inf for p in policies]),
        rule=np.array([rules.index(p.keep) if p.keep in kept_at else -1 for p in policies], np.int64),
        kept=np.array([kept_at[r][1][gc] for r in rules], np.float64).reshape(len(rules), len(gc)),
        cut_rows=np.array([kept_at[r][0][gc] for r in rules], np.int64).reshape(len(rules), len(gc)))


def _runs(table: pa.Table, f, prep, branch: str) -> list[tuple[int, np.ndarray]]:
    """(leaf row, the calls on its branch in order) for every branch to replay."""
    n = table.num_rows
    calls = prep.is_call & ~f.cyclic
    if branch == "current":
        on = current_branch_mask(table, f)
        codes = f.file_code
        leaf_of = {}
        # the leaf of each file's current branch: its deepest row on the branch
        rows = np.nonzero(on)[0]
        order = np.lexsort((f.depth[rows], codes[rows]))
        last = rows[order][np.r_[codes[rows][order][1:] != codes[rows][order][:-1], True]] if rows.size else rows
        for r in last:
            leaf_of[codes[r]] = r
        sel = np.nonzero(on & calls)[0]
        sel = sel[np.lexsort((f.depth[sel], codes[sel]))]
        out = []
        if sel.size:
            splits = np.nonzero(codes[sel][1:] != codes[sel][:-1])[0] + 1
            for part in np.split(sel, splits):
                out.append((leaf_of.get(codes[part[0]], -1), part))
        return out
    has_child = np.zeros(n, bool)
    p = f.parent[(f.parent >= 0) & ~f.is_leaf_record]
    has_child[p] = True
    leaves = np.nonzero(~has_child & ~f.is_leaf_record & ~f.cyclic)[0]
    out = []
    for leaf in leaves:  # one run per leaf
        same = np.nonzero((f.file_code == f.file_code[leaf]) & calls)[0]
        on = same[f.is_ancestor(same, np.full(len(same), leaf))]
        out.append((int(leaf), on[np.argsort(f.depth[on], kind="stable")]))
    return out


def _cat(parts: list[dict[str, np.ndarray]], key: str, dtype=None) -> np.ndarray:
    if not parts:
        return np.zeros(0, dtype or np.int64)
    a = parts[0][key] if len(parts) == 1 else np.concatenate([p[key] for p in parts])
    return a.astype(dtype, copy=False) if dtype else a


def _take_rows(col, rows: np.ndarray) -> pa.Array:
    """``col[rows]`` (null where ``rows`` is -1) for a string column: decoded from a dictionary
    array whose dictionary is the column, several times faster than a take on millions of rows."""
    rows = np.asarray(rows, np.int64)
    values = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    if len(values) >= 2**31 - 1 or not pa.types.is_string(values.type):
        return pc.take(values, arrow_indices(rows, rows < 0))
    indices = from_numpy(rows.astype(np.int32), mask=rows < 0)
    return pa.DictionaryArray.from_arrays(indices, values).cast(values.type)


def _take_few(col, rows: np.ndarray) -> pa.Array:
    """``col[rows]`` (null where ``rows`` is -1) for rows that repeat a few distinct ones (a row per
    branch, repeated per policy): those taken, then repeated (the column is never combined)."""
    distinct, inverse = np.unique(np.asarray(rows, np.int64), return_inverse=True)
    values = pc.take(col, arrow_indices(distinct, distinct < 0))
    values = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    return values.take(arrow_indices(inverse.reshape(-1)))


def _sessions_table(table: pa.Table, parts: list[dict[str, np.ndarray]], policies: list) -> pa.Table:
    pidx = _cat(parts, "policy_index")
    names = strings([p.name for p in policies])
    windows = np.array([p.context_window if p.context_window is not None else -1 for p in policies] or [-1])
    win = windows[pidx] if len(pidx) else np.zeros(0, np.int64)
    return arrow_table({
        "session_id": _take_few(table["session_id"], _cat(parts, "row")),
        "file": _take_few(table["file"], _cat(parts, "row")),
        "leaf_id": _take_few(table["entry_id"], _cat(parts, "leaf")),
        "policy": names.take(arrow_indices(pidx)),
        "policy_index": pidx,
        "context_window": from_numpy(win, mask=win < 0, type=_I64),
        **{k: np.round(_cat(parts, k)).astype(np.int64) for k in (
            "calls", "compactions", "recorded_compactions", "matched_compactions", "peak_context_tokens",
            "prompt_tokens", "summarized_tokens")},
        **{k: _cat(parts, k, np.float64) for k in (
            "cost_usd", "summary_calls_cost_usd", "recorded_cost_usd", "net_saving_usd")},
        "overflow_calls": _cat(parts, "overflow_calls", np.int64),
    }, schema_of(SIMULATION_SESSION_COLUMNS))


def _calls_table(table: pa.Table, parts: list[dict[str, np.ndarray]]) -> pa.Table:
    return arrow_table({
        "session_id": _take_rows(table["session_id"], _cat(parts, "first")),
        "leaf_id": _take_rows(table["entry_id"], _cat(parts, "leaf")),
        "policy_index": _cat(parts, "policy_index"),
        "at_id": _take_rows(table["entry_id"], _cat(parts, "row")),
        "call_index": _cat(parts, "call_index"),
        **{k: np.round(_cat(parts, k, np.float64)).astype(np.int64) for k in (
            "prompt_tokens", "context_before", "context_after")},
        "compacted": _cat(parts, "compacted", bool),
        "cut_entry_id": _take_rows(table["entry_id"], _cat(parts, "cut_row")),
        "recorded_compaction": _cat(parts, "recorded_compaction", bool),
        "cost_usd": _cat(parts, "cost_usd", np.float64),
        "summary_cost_usd": _cat(parts, "summary_cost_usd", np.float64),
    }, schema_of(SIMULATION_CALL_COLUMNS))
