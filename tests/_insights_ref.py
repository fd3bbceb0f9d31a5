"""Plain Python references for the insight tables, one session file's rows at a time.

Each takes the rows of one file (``table.to_pylist()``, in file order) and walks parent pointers
with loops and dictionaries; contexts come from the object model (``member_ids``), so the
references share nothing with the vectorised code but the per-entry columns of the table.
"""

from __future__ import annotations

from collections import defaultdict

from sessionlab import CycleError, ImageContent, Session
from sessionlab.pi.context import project_context_entries
from sessionlab.pi.tokens import estimate_tokens
from tests._usage_ref import parents

GIVES = ("message", "custom_message")


def member_ids(storage, entry_id, rules="pi-1.6") -> list[str] | None:
    """The entry ids of the context at ``entry_id`` in order, from the object model (None on a cycle)."""
    if entry_id is None:
        return []
    try:
        path = storage.get_branch(entry_id)
    except CycleError:
        return None
    Session(storage)  # (the same storage the object model builds contexts from)
    return [p.entry.id for p in project_context_entries(path, rules=rules) for _ in p.messages]


def _last_row(rows) -> dict[str, int]:
    return {r["entry_id"]: i for i, r in enumerate(rows) if r["type"] != "leaf"}


def gives(r) -> bool:
    return r["type"] in GIVES or (r["type"] == "branch_summary" and (r["summary_chars"] or 0) > 0)


def compaction_diff(rows, storage) -> set[tuple]:
    """{(compaction id, entry id, status)} of every recorded compaction and branch summary."""
    par = parents(rows)
    out = set()
    for i, r in enumerate(rows):
        if r["type"] not in ("compaction", "branch_summary"):
            continue
        if member_ids(storage, r["entry_id"]) is None:
            continue  # on a cycle
        if r["type"] == "branch_summary":
            before = rows[i - 1]["entry_id"] if i else None
        else:
            before = rows[par[i]]["entry_id"] if par[i] is not None else None
        was = member_ids(storage, before) or []
        now = set(member_ids(storage, r["entry_id"]))
        for eid in dict.fromkeys(was):
            out.add((r["entry_id"], eid, "kept" if eid in now else "dropped"))
    return out


def path_rows(rows, i) -> list[int]:
    par, out, x = parents(rows), [], i
    while x is not None:
        out.append(x)
        x = par[x]
    return out[::-1]


def simulated_diff(rows, compactions) -> set[tuple]:
    """{(call id, entry id, status)} of simulated compactions ``[(call row, cut row or None)]`` of one
    branch and policy, in call order."""
    out, prev_cut = set(), None
    for at, cut in compactions:
        path = path_rows(rows, at)
        start = path.index(prev_cut) if prev_cut is not None and prev_cut in path else 0
        keep_from = path.index(cut) if cut is not None and cut in path else None
        for k, x in enumerate(path[start:], start):
            if gives(rows[x]):
                kept = keep_from is None or k >= keep_from
                out.add((rows[at]["entry_id"], rows[x]["entry_id"], "kept" if kept else "dropped"))
        prev_cut = cut
    return out


def kinds_at(rows, storage, entry_id) -> dict[str, int]:
    """The content kinds of the context at ``entry_id`` (as estimate_accuracy splits them, without
    blocks): each message of the object model's projection (context edits applied), estimated with
    pi's rule and classed by its role."""
    if entry_id is None:
        return {}
    try:
        path = storage.get_branch(entry_id)
    except CycleError:
        return {}
    out = defaultdict(int)
    for p in project_context_entries(path, rules="pi-1.6"):
        for m in p.messages:
            est = estimate_tokens(m, rules="pi-1.6")
            content = getattr(m, "content", None)
            images = sum(isinstance(b, ImageContent) for b in content) if isinstance(content, tuple) else 0
            img = min(images * 1200, est)
            if m.role in ("toolResult", "bashExecution"):
                out["tool_output"] += est - img
                out["images"] += img
            elif m.role in ("system", "developer"):
                out["system"] += est
            elif m.role in ("compactionSummary", "branchSummary"):
                out["summary"] += est
            else:
                out["images"] += img
                out["text"] += est - img
    return dict(out)


def estimate_only(storage, entry_id) -> int:
    return sum(kinds_at(None, storage, entry_id).values())


def previous_call(rows, i, is_call) -> int | None:
    """The nearest call above row ``i`` on its branch."""
    par = parents(rows)
    x = par[i]
    while x is not None and not is_call(rows[x]):
        x = par[x]
    return x


def cache_misses(rows, ts) -> list[tuple]:
    """[(call id, cause, rewritten tokens)] of one pi file (every assistant message is a call);
    ``ts`` gives each row's time in seconds."""
    def is_call(r):
        return r["type"] == "message" and r["role"] == "assistant"

    par = parents(rows)
    out, prev_in_file = [], None
    for i, r in enumerate(rows):
        if not is_call(r) or _cyclic(rows, i):
            continue
        p = previous_call(rows, i, is_call)
        cr, cw = r["cache_read_tokens"] or 0, r["cache_write_tokens"] or 0
        held = 0 if p is None else (rows[p]["cache_read_tokens"] or 0) + (rows[p]["cache_write_tokens"] or 0)
        switched = p is not None and prev_in_file != p
        prev_in_file = i
        if not (cw > 0 and (p is None or cr < held)):
            continue
        rewritten = cw if p is None else min(cw, held - cr)
        between = []
        x = par[i]
        while x is not None and x != p:
            between.append(rows[x])
            x = par[x]
        request = par[i] if par[i] is not None else i
        gap = None if p is None else ts[request] - ts[p]
        ttl = 3600 if p is not None and (rows[p]["cache_write_1h_tokens"] or 0) > 0 else 300
        if p is None:
            cause = "first_call"
        elif switched:
            cause = "branch_switch"
        elif any(b["type"] in ("compaction", "context_edit") for b in between):
            cause = "compaction"
        elif (r["provider"], r["model"]) != (rows[p]["provider"], rows[p]["model"]):
            cause = "model_switch"
        elif any(b["type"] == "message" and b["role"] in ("system", "developer") for b in between):
            cause = "system_change"
        elif any(b["type"] == "thinking_level_change" for b in between):
            cause = "thinking_change"
        elif gap is not None and gap > ttl:
            cause = "idle_gap"
        else:
            cause = "unexplained"
        out.append((r["entry_id"], cause, rewritten))
    return out


def _cyclic(rows, i) -> bool:
    by_id = _last_row(rows)
    seen, x = set(), i
    while x is not None and x not in seen:
        seen.add(x)
        pid = rows[x]["parent_id"]
        x = by_id.get(pid) if pid is not None else None
    return x is not None


def tool_stats(rows, storage, ts) -> dict[str, dict]:
    """Per tool name: calls, failures, retries, result_tokens, context_tokens, context_share,
    cost_usd, total_seconds (one pi file)."""
    last = _last_row(rows)
    par = parents(rows)

    def is_result(r):
        return r["type"] == "message" and r["role"] == "toolResult" and r["tool_name"] is not None

    def is_call(r):
        return r["type"] == "message" and r["role"] == "assistant"

    out = defaultdict(lambda: defaultdict(float))
    for i, r in enumerate(rows):
        if not is_result(r) or _cyclic(rows, i):
            continue
        t = out[r["tool_name"]]
        t["calls"] += 1
        t["failures"] += bool(r["is_error"])
        p = previous_call(rows, i, is_result)
        t["retries"] += p is not None and bool(rows[p]["is_error"]) and rows[p]["tool_name"] == r["tool_name"]
        t["result_tokens"] += r["est_tokens"] or 0
        asker = previous_call(rows, i, is_call) if par[i] is not None else None
        if asker is not None:
            t["total_seconds"] += ts[i] - ts[asker]
    denom = 0.0
    carried = defaultdict(float)
    cost = defaultdict(float)
    for i, r in enumerate(rows):
        if not is_call(r) or _cyclic(rows, i) or par[i] is None:
            continue
        path = storage.get_branch(rows[par[i]]["entry_id"])
        total = estimate_only(storage, rows[par[i]]["entry_id"])
        denom += total
        per = defaultdict(float)
        for p in project_context_entries(path, rules="pi-1.6"):
            m = rows[last[p.entry.id]]
            if is_result(m):
                per[m["tool_name"]] += sum(estimate_tokens(x, rules="pi-1.6") for x in p.messages)
        for name, v in per.items():
            carried[name] += v
            cost[name] += (v / total if total > 0 else 0.0) * (r["cost_usd"] or 0.0)
    for name, t in out.items():
        t["context_tokens"] = carried[name]
        t["context_share"] = carried[name] / denom if denom > 0 else None
        t["cost_usd"] = cost[name]
    return {k: dict(v) for k, v in out.items()}


def subagent_runs(rows) -> dict[str, dict]:
    """Per subagent run id: top session, calls and cost, from the rows of every file (loops)."""
    out = {}
    for r in rows:
        sid, root = r["session_id"], r.get("root_session_id") or r["session_id"]
        if root == sid:
            continue
        run = out.setdefault(sid, {"session_id": root, "calls": 0, "cost_usd": 0.0})
        counted = r["input_tokens"] is not None
        if r["type"] == "message" and r["role"] == "assistant" and counted:
            run["calls"] += 1
        if r["usage_kind"] is not None:
            run["cost_usd"] += r["cost_usd"] or 0.0
    return out
