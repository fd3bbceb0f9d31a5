"""How good the token estimate is: pi's estimate of every call's context beside the recorded prompt,
and a calibrated estimator fitted from the recorded prompts.

*The estimate* is ``contexts(...)["estimated_tokens"]``: every message of the context the call was
sent, estimated with pi's rule (``ceil(chars / 4)``, 1,200 tokens an image). The files do not hold
the system prompt or the tool definitions, so the estimate misses them; the recorded prompt
(input + cache read + cache write) counts them.

*Content kinds* split each message's estimate: ``tool_output`` (toolResult and bashExecution
messages), ``images`` (1,200 tokens an image, at most the message's estimate), ``system`` (system
and developer messages, a compaction's replayed system message), ``summary`` (compaction and
branch summaries), ``thinking`` and ``tool_calls`` (an assistant message's thinking and tool-call
blocks, in proportion to their characters: only with ``blocks=``, else null and counted as
``text``), and ``text`` (the rest: what the split leaves, a seed retained tail included, so the
kinds add up to the estimate). A pi 1.6 context edit that removes a message takes its kinds out;
one that replaces it moves the change to the message's own kind.

The agents' files hold no estimate of their own (Claude Code and Codex record only what the
provider counted), so the estimate is pi's rule for every agent.

*The calibrated estimator* is, per model, ``overhead + sum(weight[kind] * tokens[kind])``. The
weights are fitted by least squares on the differences between consecutive calls' recorded
prompts on a branch (same model, no compaction between): the difference is what the new messages
cost, so the fixed overhead (system prompt, tools) cancels. Each weight stays within
[0.25, 4] (1 to 16 characters a token); a kind a model's pairs never change keeps the weight
fitted over all models (1: pi's rule, when no pair changes it either). The overhead is the median
of ``recorded - sum(weight * tokens)`` over the model's calls. A model with too few pairs takes the
fit over all models.

*Held out*: sessions are split by a hash of their id, ``holdout`` of them (20%) left out of the
fit; when that leaves either side without calls, each session's last ``holdout`` of calls are
left out instead.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._arrow import arrow_table, from_numpy, scalar, strings, to_numpy
from ..errors import ArgumentValueError
from ..pi.rules import Rules
from ..tables import Column, df_variant, returns, schema_of
from ..tables.corpus import SessionIds, as_entries, select_sessions
from ._insights_base import edit_deltas, take
from .contexts import _Window, context_arrays, target_rows
from .usage import previous_calls

__all__ = ["estimate_accuracy", "estimate_accuracy_df", "calibrate_estimate", "calibrated_entries",
           "EstimateCalibration", "ESTIMATE_COLUMNS", "CALIBRATION_COLUMNS", "KINDS"]

KINDS = ("text", "thinking", "tool_calls", "tool_output", "images", "system", "summary")
_S, _I64, _F64, _B = pa.string(), pa.int64(), pa.float64(), pa.bool_()
_LOW, _HIGH = 0.25, 4.0  # weight bounds: 16 to 1 characters a token
_MIN_PAIRS = 8

ESTIMATE_COLUMNS: tuple[Column, ...] = (
    Column("session_id", _S, "Session id."),
    Column("at_id", _S, "The call (an assistant message that records a prompt)."),
    Column("agent", _S, "Agent of the session."),
    Column("model", _S, "Model of the call."),
    Column("recorded_tokens", _I64, "The prompt the call's usage records (input + cache read + cache write)."),
    Column("estimated_tokens", _I64, "pi's estimate of the context the call was sent (every message estimated)."),
    Column("error", _I64, "estimated_tokens - recorded_tokens."),
    Column("relative_error", _F64, "error / recorded_tokens."),
    Column("calibrated_tokens", _I64, "The calibrated estimator's estimate (see the module doc)."),
    Column("calibrated_error", _I64, "calibrated_tokens - recorded_tokens."),
    Column("held_out", _B, "Whether the call was left out of the calibration's fit (false when a calibration "
           "was given)."),
    *(Column(f"{k}_tokens", _I64, f"pi's estimate of the context's {k.replace('_', ' ')} "
             f"({'null without blocks=' if k in ('thinking', 'tool_calls') else 'see the module doc'}).")
      for k in KINDS),
    *(Column(f"{k}_error", _I64, f"The part of error - calibrated_error due to {k.replace('_', ' ')}: pi's "
             f"estimate of it minus the calibrated one.") for k in KINDS),
    Column("overhead_error", _I64, "The part due to what the files do not hold (system prompt, tool "
           "definitions): minus the model's fitted overhead."),
)
CALIBRATION_COLUMNS: tuple[Column, ...] = (
    Column("model", _S, "Model ('*': the fit over all models, used for models not listed)."),
    Column("kind", _S, "Content kind, or 'overhead'."),
    Column("weight", _F64, "Tokens per pi-estimated token of the kind; for 'overhead' the fixed tokens."),
    Column("chars_per_token", _F64, "4 / weight: characters a token (null for 'overhead')."),
    Column("pairs", _I64, "Consecutive-call pairs the model's weights were fitted on."),
)


@dataclass(frozen=True)
class EstimateCalibration:
    """A fitted calibrated estimator (see :mod:`sessionlab.analysis._estimate`): per model, weights
    per content kind and an overhead. ``ratios`` is its table (columns ``CALIBRATION_COLUMNS``),
    ``split`` how the held-out calls were chosen ('session' or 'call')."""

    weights: dict = field(repr=False)
    overhead: dict = field(repr=False)
    pairs: dict = field(repr=False)
    split: str = "session"

    def estimate(self, models: list, kinds: np.ndarray, *, overhead: bool = True) -> np.ndarray:
        """The calibrated estimate of rows of ``kinds`` (rows x KINDS) of the given models."""
        names = sorted({m or "" for m in models})
        index = {m: i for i, m in enumerate(names)}
        codes = np.fromiter((index[m or ""] for m in models), np.int64, len(models))
        w, b = self.per_row(codes, names)
        return (kinds * w).sum(axis=1) + (b if overhead else 0.0)

    def per_row(self, codes: np.ndarray, names: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """The weights (rows x KINDS) and overhead of rows whose model is ``names[code]``."""
        table = np.array([self.weights.get(m, self.weights["*"]) for m in names] or [self.weights["*"]], np.float64)
        over = np.array([self.overhead.get(m, self.overhead["*"]) for m in names] or [0.0], np.float64)
        return table[codes], over[codes]

    @property
    def ratios(self) -> pa.Table:
        models, kinds, weights, pairs = [], [], [], []
        for m in sorted(self.weights, key=lambda k: (k != "*", k)):
            for k, w in [*zip(KINDS, self.weights[m]), ("overhead", self.overhead.get(m, 0.0))]:
                models.append(m)
                kinds.append(k)
                weights.append(float(w))
                pairs.append(self.pairs.get(m, 0))
        w = np.asarray(weights, np.float64)
        per_char = np.asarray(kinds, object) != "overhead"
        return arrow_table({
            "model": strings(models), "kind": strings(kinds), "weight": w,
            "chars_per_token": from_numpy(4.0 / np.where(w > 0, w, 1.0), mask=~per_char | (w <= 0), type=_F64),
            "pairs": np.asarray(pairs, np.int64)}, schema_of(CALIBRATION_COLUMNS))

    def __repr__(self) -> str:
        return f"EstimateCalibration({len(self.weights) - 1} models, split={self.split!r})"


def _np(col, fill, dtype) -> np.ndarray:
    return np.asarray(to_numpy(col, fill), dtype)


class _Calls:
    """The calls that record a prompt, their context's tokens by kind, and their fit pairs."""

    def __init__(self, table: pa.Table, rules: Rules | None, blocks) -> None:
        prep = self.prep = context_arrays(table, rules)
        f = prep.forest
        tgt, base = target_rows(prep, "calls")
        parts = [_np(table[c], 0, np.int64)[tgt] for c in ("input_tokens", "cache_read_tokens", "cache_write_tokens")]
        prompt = parts[0] + parts[1] + parts[2]
        ok = _np(pc.is_valid(table["input_tokens"]), False, bool)[tgt] & (prompt > 0) & (base != -2)
        self.tgt, self.base, self.recorded = tgt[ok], base[ok], prompt[ok]
        r = prep.compute(self.base)
        self.estimated = r["estimate_only"]
        self.comp = r["comp"]
        self.has_blocks = blocks is not None
        self.kinds = _context_kinds(prep, self.base, _row_kinds(prep, blocks), r)
        codes, self.model_names = _model_codes(table)
        self.model_code = codes[self.tgt]
        self.file = f.file_code[self.tgt]
        self.file_sid = f.per_file("session_id", f.first_row_of_file).to_pylist()  # one per file
        # consecutive calls on a branch: the previous call that records a prompt
        is_call = np.zeros(table.num_rows, bool)
        is_call[self.tgt] = True
        rows, prev, _ = previous_calls(f, is_call)  # rows == self.tgt (both in row order)
        pos = np.full(table.num_rows, -1, np.int64)
        pos[rows] = np.arange(len(rows))
        j = np.where(prev >= 0, pos[np.maximum(prev, 0)], -1)
        model = self.model_code
        jj = np.maximum(j, 0)
        self.pair = np.where((j >= 0) & (model == model[jj]) & (self.comp == self.comp[jj]), j, -1)


def _model_codes(table: pa.Table) -> tuple[np.ndarray, list[str]]:
    """Each row's model as a code into the returned names (a null model is '')."""
    col = pc.fill_null(table["model"], scalar(""))
    enc = pc.dictionary_encode(col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col)
    return _np(enc.indices, 0, np.int64), [str(v) for v in enc.dictionary.to_pylist()]


def _row_kinds(prep, blocks) -> np.ndarray:
    """Each row's message estimate split by kind (rows x KINDS, pi tokens)."""
    t, f = prep.table, prep.forest
    n = t.num_rows
    est = prep.est_msg.astype(np.float64)
    out = np.zeros((n, len(KINDS)), np.float64)
    ic = _np(t["image_count"], 0, np.int64) if "image_count" in t.column_names else np.zeros(n, np.int64)
    img = np.minimum(ic * 1200.0, est)
    tool = f.isin("role", ("toolResult", "bashExecution"))
    system = f.isin("role", ("system", "developer"))
    summary = f.isin("type", ("branch_summary", "compaction"))
    out[:, KINDS.index("images")] = np.where(system | summary, 0.0, img)
    out[:, KINDS.index("tool_output")] = np.where(tool, est - img, 0.0)
    out[:, KINDS.index("system")] = np.where(system, est, 0.0)
    out[:, KINDS.index("summary")] = np.where(summary, est, 0.0)
    text = np.where(tool | system | summary, 0.0, est - img)
    if blocks is not None:
        share = _block_shares(prep, as_entries(blocks) if not isinstance(blocks, pa.Table) else blocks)
        for k, s in share.items():
            out[:, KINDS.index(k)] = text * s
        text = text * (1.0 - sum(share.values()))
    out[:, KINDS.index("text")] = text
    return out


def _block_shares(prep, blocks: pa.Table) -> dict[str, np.ndarray]:
    """Per row, the share of an assistant message's characters in thinking and tool-call blocks."""
    t = prep.table
    n = t.num_rows
    key = pc.binary_join_element_wise(t["session_id"], t["entry_id"], scalar("\x1f")).combine_chunks()
    bkey = pc.binary_join_element_wise(blocks["session_id"], blocks["entry_id"], scalar("\x1f"))
    row = _np(pc.index_in(bkey, value_set=key), -1, np.int64)
    chars = _np(blocks["chars"], 0, np.float64)
    ok = row >= 0
    total = np.bincount(row[ok], weights=chars[ok], minlength=n)
    out = {}
    for kind, btype in (("thinking", "thinking"), ("tool_calls", "toolCall")):
        sel = ok & _np(pc.equal(blocks["block_type"], scalar(btype)), False, bool)
        part = np.bincount(row[sel], weights=chars[sel], minlength=n)
        out[kind] = np.where(prep.is_assistant & (total > 0), part / np.maximum(total, 1.0), 0.0)
    return out


def _context_kinds(prep, base: np.ndarray, kinds: np.ndarray, r: dict) -> np.ndarray:
    """The kinds summed over each context at ``base`` (as pi's estimate sums its messages)."""
    f = prep.forest
    w = _Window(prep, base)
    out = np.zeros((len(base), len(KINDS)), np.float64)
    si = KINDS.index("system")
    for k in range(len(KINDS)):
        v = kinds[:, k]
        if not v.any():
            continue
        cum = f.path_sum(v)
        out[:, k] = w.window(cum, v) - (w.kept(cum, v) if k == si else 0.0)
    cc = w.cc
    out[:, KINDS.index("summary")] += np.where(w.has_c, prep.est[cc], 0)
    out[:, si] += np.where(w.comp_sys, prep.sys_est[cc], 0)
    _edited(prep, base, kinds, r, out)
    _edited_compaction(prep, base, w.c, r, out)
    out[~w.ok] = 0.0
    # what the split leaves over (a retained tail, rounding) is text: the kinds add up to the estimate
    rest = r["estimate_only"] - out.sum(axis=1)
    out[:, KINDS.index("text")] += rest
    return out


def _edited(prep, base: np.ndarray, kinds: np.ndarray, r: dict, out: np.ndarray) -> None:
    """pi 1.6's context edits: a removed message takes its kinds out of the context; a replaced
    one's change goes to its own kind (tool output for a tool result, system, summary, else text)."""
    k, x, delta = edit_deltas(prep, base, r)
    if not len(k):
        return
    f = prep.forest
    removed = delta == -prep.est_msg[x]
    primary = np.where(f.isin("role", ("toolResult", "bashExecution"))[x], KINDS.index("tool_output"),
                       np.where(f.isin("role", ("system", "developer"))[x], KINDS.index("system"),
                                np.where(f.isin("type", ("branch_summary",))[x], KINDS.index("summary"),
                                         KINDS.index("text"))))
    np.subtract.at(out, k[removed], kinds[x[removed]])
    np.add.at(out, (k[~removed], primary[~removed]), delta[~removed])


def _edited_compaction(prep, base: np.ndarray, comp: np.ndarray, r: dict, out: np.ndarray) -> None:
    """pi 1.6's edit of a context's own compaction (which :func:`_edited` leaves to the walk that
    corrects the context's total): removed, its summary leaves the context (a replacement leaves
    the summary as it was: pi's projection keeps a compaction's summary)."""
    from ._edits import edit_pairs

    if "edited" not in r or not r["edited"].any():
        return
    idx = np.nonzero(r["edited"] & (comp >= 0))[0]
    k, e, x = edit_pairs(prep, base[idx], r["start_depth"][idx])
    own = (x >= 0) & (x == comp[idx][k])
    removed = own & (prep.edit_action[e] == "remove")
    np.subtract.at(out, (idx[k[removed]], KINDS.index("summary")), prep.est[x[removed]])


def _split(calls: _Calls, holdout: float) -> tuple[np.ndarray, str]:
    """Which calls are held out, and how they were chosen (see the module doc)."""
    if not 0.0 <= holdout < 1.0:
        raise ArgumentValueError("holdout", f"holdout must be in [0, 1), not {holdout!r}")
    held_file = np.array([s is not None and zlib.crc32(s.encode()) % 1000 < holdout * 1000
                          for s in calls.file_sid], bool)  # a loop over files
    held = held_file[calls.file] if len(calls.file) else np.zeros(0, bool)
    if holdout == 0 or (held.any() and (~held).any()):
        return held, "session"
    # each session's last calls (calls are in row order: a file's in file order)
    count = np.bincount(calls.file, minlength=len(calls.file_sid))
    order = np.argsort(calls.file, kind="stable")
    pos = np.empty(len(order), np.int64)
    pos[order] = np.arange(len(order)) - (np.cumsum(count) - count)[calls.file[order]]
    k = np.floor(count * holdout).astype(np.int64)
    held = pos >= (count - k)[calls.file]
    return held, "call"


def _fit_weights(dx: np.ndarray, dy: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """Least squares of ``dy`` on ``dx`` with every weight in [_LOW, _HIGH]; columns that never
    change keep ``prior``. Out-of-range weights are fixed at the bound and the rest refitted."""
    w = prior.astype(np.float64).copy()
    free = np.abs(dx).sum(axis=0) > 0
    for _ in range(len(prior) + 1):
        if not free.any():
            break
        rhs = dy - dx[:, ~free] @ w[~free]
        sol = np.linalg.lstsq(dx[:, free], rhs, rcond=None)[0]
        bad = (sol < _LOW) | (sol > _HIGH)
        idx = np.nonzero(free)[0]
        w[idx] = np.clip(sol, _LOW, _HIGH)
        if not bad.any():
            break
        free[idx[bad]] = False
    return w


def _median(values: np.ndarray) -> float:
    """The median (``np.median`` imports ``numpy.ma`` on first use: 70 ms in a fresh process)."""
    v = np.sort(np.asarray(values, np.float64))
    n = len(v)
    return float((v[(n - 1) // 2] + v[n // 2]) / 2) if n else 0.0


def _fit(calls: _Calls, train: np.ndarray, split: str) -> EstimateCalibration:
    model, names = calls.model_code, calls.model_names
    j = calls.pair
    use = train & (j >= 0) & train[np.maximum(j, 0)]
    dx = calls.kinds[use] - calls.kinds[j[use]]
    dy = (calls.recorded[use] - calls.recorded[j[use]]).astype(np.float64)
    ones = np.ones(len(KINDS))
    weights = {"*": _fit_weights(dx, dy, ones) if use.sum() >= _MIN_PAIRS else ones}
    pairs = {"*": int(use.sum())}
    used_model = model[use]
    present = np.flatnonzero(np.bincount(model[train], minlength=len(names)))
    for code in present:  # a loop over models
        m = names[code]
        sel = used_model == code
        pairs[m] = int(sel.sum())
        weights[m] = _fit_weights(dx[sel], dy[sel], weights["*"]) if sel.sum() >= _MIN_PAIRS else weights["*"]
    overhead = {}
    for code in present:
        sel = train & (model == code)
        overhead[names[code]] = float(_median(calls.recorded[sel] - calls.kinds[sel] @ weights[names[code]]))
    allr = calls.recorded[train] - calls.kinds[train] @ weights["*"]
    overhead["*"] = float(_median(allr)) if len(allr) else 0.0
    return EstimateCalibration(weights, overhead, pairs, split)


def calibrate_estimate(entries, *, session_id: SessionIds = None, holdout: float = 0.2, blocks=None,
                       rules: Rules | None = None) -> EstimateCalibration:
    """Fit the calibrated estimator (see the module doc) on the calls that are not held out.

    Args:
        entries: a :class:`~sessionlab.Corpus` or its entries table.
        session_id: fit on these sessions only.
        holdout: the share of sessions (or calls, see the module doc) left out of the fit.
        blocks: the blocks table (``corpus.blocks``) to split thinking and tool calls from text.
        rules: as for :func:`contexts`.

    Example:
        >>> cal = calibrate_estimate(load("data/"))  # doctest: +SKIP
        >>> cal.ratios  # doctest: +SKIP
    """
    calls = _Calls(select_sessions(entries, session_id), rules, blocks)
    held, split = _split(calls, holdout)
    return _fit(calls, ~held, split)


@returns(ESTIMATE_COLUMNS)
def estimate_accuracy(entries, *, session_id: SessionIds = None, calibration: EstimateCalibration | None = None,
                      holdout: float = 0.2, blocks=None, rules: Rules | None = None) -> pa.Table:
    """pi's token estimate beside the recorded prompt at every call that records one, and the
    calibrated estimator's.

    Args:
        entries: a :class:`~sessionlab.Corpus` or its entries table (Arrow or pandas).
        session_id: only the calls of this session (or these sessions) are listed; the
            calibration is fitted on every session given all the same.
        calibration: a fitted :class:`EstimateCalibration`; default: fitted here on the calls not
            held out (``held_out`` says which).
        holdout: the share left out of that fit (see the module doc).
        blocks: the blocks table (``corpus.blocks``): splits thinking and tool calls out of text.
        rules: as for :func:`contexts`.

    Returns:
        One row per call with a recorded prompt, in table order, with columns:

{columns}

    Example:
        >>> acc = estimate_accuracy(load("data/"))  # doctest: +SKIP
        >>> acc.group_by("model").aggregate([("error", "mean"), ("calibrated_error", "mean")])  # doctest: +SKIP
    """
    table = as_entries(entries)
    calls = _Calls(table, rules, blocks)
    if calibration is None:
        held, split = _split(calls, holdout)
        calibration = _fit(calls, ~held, split)
    else:
        held = np.zeros(len(calls.tgt), bool)
    out = _accuracy_table(table, calls, calibration, held)
    if session_id is None:
        return out
    return select_sessions(out, session_id)


estimate_accuracy_df = df_variant(estimate_accuracy)


def _accuracy_table(table: pa.Table, calls: _Calls, cal: EstimateCalibration, held: np.ndarray) -> pa.Table:
    m = len(calls.tgt)
    kinds = calls.kinds
    weights, over = cal.per_row(calls.model_code, calls.model_names)
    cal_kinds = kinds * weights
    calibrated = np.rint(cal_kinds.sum(axis=1) + over).astype(np.int64)
    est = calls.estimated.astype(np.int64)
    rec = calls.recorded
    agent = take(table["agent"], calls.tgt) if "agent" in table.column_names else strings(["pi"] * m)
    cols = {
        "session_id": take(strings(calls.file_sid), calls.file),
        "at_id": take(table["entry_id"], calls.tgt),
        "agent": pc.fill_null(agent, scalar("pi")),
        "model": take(table["model"], calls.tgt),
        "recorded_tokens": rec,
        "estimated_tokens": est,
        "error": est - rec,
        "relative_error": (est - rec) / np.maximum(rec, 1),
        "calibrated_tokens": calibrated,
        "calibrated_error": calibrated - rec,
        "held_out": held,
    }
    no_blocks = not calls.has_blocks
    for i, k in enumerate(KINDS):
        null = no_blocks and k in ("thinking", "tool_calls")
        cols[f"{k}_tokens"] = from_numpy(np.rint(kinds[:, i]).astype(np.int64), mask=np.full(m, null), type=_I64)
    for i, k in enumerate(KINDS):
        null = no_blocks and k in ("thinking", "tool_calls")
        part = np.rint(kinds[:, i] - cal_kinds[:, i]).astype(np.int64)
        cols[f"{k}_error"] = from_numpy(part, mask=np.full(m, null), type=_I64)
    cols["overhead_error"] = np.rint(-over).astype(np.int64)
    return arrow_table(cols, schema_of(ESTIMATE_COLUMNS))


def calibrated_entries(table: pa.Table, calibration: EstimateCalibration, rules: Rules | None = None) -> pa.Table:
    """``table`` with ``est_tokens`` replaced by the calibrated estimate of each message (its kinds
    times the weights of the model in effect there; no overhead: that is no message's), what
    ``simulate_compaction(..., estimator="calibrated")`` replays."""
    prep = context_arrays(table, rules)
    kinds = _row_kinds(prep, None)
    src = prep.model_src
    codes, names = _model_codes(table)
    none = len(names)  # no model in effect: the fit over all models
    w, _ = calibration.per_row(np.where(src >= 0, codes[np.maximum(src, 0)], none), [*names, "*"])
    new = (kinds * w).sum(axis=1)
    est = prep.est.astype(np.float64)
    out = np.where(prep.gives, new, np.where(prep.is_comp, est * w[:, KINDS.index("summary")], est))
    valid = pc.is_valid(table["est_tokens"])
    col = from_numpy(np.rint(out).astype(np.int64), mask=~_np(valid, False, bool), type=_I64)
    i = table.schema.get_field_index("est_tokens")
    return table.set_column(i, table.schema.field(i), col)
