"""Plain Python references for the usage tables: one session file's rows, walked one entry at a time.

Each function takes the rows of one file (``table.to_pylist()``, in file order) and follows pi's
rules with dictionaries and loops: the parent of an entry is the last entry of the file with its
``parent_id`` (leaf records are never parents); an entry whose walk up loops is cut loose (no
parent; the branch timeline leaves it out); the current leaf is the last entry, or the target of a
trailing leaf record.
"""

from __future__ import annotations

from collections import defaultdict


def parents(rows: list[dict]) -> list[int | None]:
    """Row index of each row's parent (None: a root, an orphan, or on or below a cycle)."""
    by_id = {}
    for i, r in enumerate(rows):
        if r["type"] != "leaf":
            by_id[r["entry_id"]] = i
    up = [by_id.get(r["parent_id"]) if r["parent_id"] is not None and r["type"] != "leaf" else None
          for r in rows]
    out = []
    for i in range(len(rows)):
        seen, x = set(), i
        while x is not None and x not in seen:
            seen.add(x)
            x = up[x]
        out.append(None if x is not None else up[i])  # x not None: the walk looped
    return out


def parents_raw(rows: list[dict]) -> list[int | None]:
    by_id = {r["entry_id"]: i for i, r in enumerate(rows) if r["type"] != "leaf"}
    return [by_id.get(r["parent_id"]) if r["parent_id"] is not None and r["type"] != "leaf" else None for r in rows]


def _loops(up: list[int | None], i: int) -> bool:
    seen, x = set(), i
    while x is not None and x not in seen:
        seen.add(x)
        x = up[x]
    return x is not None


def path_to(rows: list[dict], leaf: int | None) -> list[int]:
    """Rows from the root down to ``leaf`` (just the leaf when it sits on or below a cycle: cut loose)."""
    par, out, x = parents(rows), [], leaf
    while x is not None:
        out.append(x)
        x = par[x]
    return out[::-1]


def current_leaf(rows: list[dict]) -> int | None:
    last = len(rows) - 1
    if rows[last]["type"] != "leaf":
        return last
    target = rows[last]["target_id"]
    hits = [i for i, r in enumerate(rows) if r["entry_id"] == target and r["type"] != "leaf"]
    return hits[-1] if hits else None


def is_call(r: dict) -> bool:
    return r["type"] == "message" and r["role"] == "assistant"


def _prompt(r: dict) -> int:
    return (r["input_tokens"] or 0) + (r["cache_read_tokens"] or 0) + (r["cache_write_tokens"] or 0)


def branch_calls(rows: list[dict], leaf: int | None) -> list[dict]:
    """The rows :func:`sessionlab.branch_calls` gives for the branch to ``leaf``."""
    loops = parents_raw(rows)
    path = [i for i in path_to(rows, leaf) if not _loops(loops, i)]  # (a cut-loose row is on no branch)
    all_calls = [i for i, r in enumerate(rows) if is_call(r) and not _loops(loops, i)]
    out, calls = [], []
    for i in path:
        r = rows[i]
        if is_call(r):
            prev_in_file = max((c for c in all_calls if c < i), default=None)
            out.append({"at_id": r["entry_id"], "kind": "call", "call_index": len(calls),
                        "prompt_tokens": _prompt(r), "branch_switch": bool(calls) and prev_in_file != calls[-1],
                        "tokens_before": None, "tokens_after": None})
            calls.append(i)
        elif r["type"] == "compaction":
            later = [rows[j] for j in path[path.index(i) + 1:] if is_call(rows[j]) and _prompt(rows[j]) > 0]
            out.append({"at_id": r["entry_id"], "kind": "compaction", "call_index": len(calls),
                        "prompt_tokens": None, "branch_switch": False, "tokens_before": r["tokens_before"] or 0,
                        "tokens_after": _prompt(later[0]) if later else None})
    return out


def cache_causes(rows: list[dict]) -> dict[int, tuple[int | None, str | None]]:
    """Per call row: the previous call on its branch and what broke the cache (``invalidated_by``)."""
    par = parents(rows)
    out, last_call = {}, None
    for i, r in enumerate(rows):
        if not is_call(r):
            continue
        prev, compaction, x = None, False, par[i]
        while x is not None:
            if is_call(rows[x]):
                prev = x
                break
            compaction = compaction or rows[x]["type"] == "compaction"
            x = par[x]
        if prev is None:
            cause = "first_call"
        elif compaction:
            cause = "compaction"
        elif (rows[prev]["provider"], rows[prev]["model"]) != (r["provider"], r["model"]):
            cause = "model_change"
        elif last_call != prev:
            cause = "branch_switch"
        else:
            cause = None
        out[i] = (prev, cause)
        last_call = i
    return out


def branch_sums(rows: list[dict]) -> dict[str, float]:
    """branch_costs' row of one file: calls, context tokens and cost on and off the current branch."""
    on = set(path_to(rows, current_leaf(rows)))
    s = defaultdict(float)
    for i, r in enumerate(rows):
        where = "current" if i in on else "abandoned"
        if is_call(r):
            s[f"calls_{where}"] += 1
        if is_call(r) or r.get("usage_kind") is not None:
            s[f"tokens_{where}"] += r["context_tokens"] or 0
            s[f"cost_{where}"] += r["cost_usd"] or 0.0
    return s
