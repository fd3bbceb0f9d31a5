"""Independent references for the table tests: the object model and a per-line json.loads pass."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path

from sessionlab import model as Mo
from sessionlab import read_session
from sessionlab._jsjson import js_len
from sessionlab.tokens import estimate_tokens, estimate_tokens_dict

DATA = Path(__file__).parent / "data" / "pi"
SAMPLES = sorted(DATA.rglob("*.jsonl"))


def ts_ms(s):
    if not isinstance(s, str):
        return None
    try:
        dt = datetime.fromisoformat(s)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return (dt - datetime(1970, 1, 1, tzinfo=UTC)).total_seconds() * 1000 // 1


def object_rows(path):
    """Expected column values per entry, read off the object model."""
    sf = read_session(path, on_bad_lines="skip")
    out = []
    position = {}  # id -> index of its last entry (seed leaf records are not parents)
    for i, e in enumerate(sf.entries):
        if e.type != "leaf":
            position[e.id] = i
    for i, (e, line) in enumerate(zip(sf.entries, sf.line_numbers)):
        r = {"entry_id": e.id, "parent_id": e.parent_id, "type": e.type, "line_no": line,
             "session_id": sf.header.id if sf.header else None, "entry_index": i,
             "parent_index": None if e.type == "leaf" else position.get(e.parent_id)}
        m = e.message if isinstance(e, Mo.MessageEntry) else None
        r["role"] = m.role if m is not None else None
        if isinstance(m, Mo.AssistantMessage):
            r.update(provider=m.provider, model=m.model, api=m.api, stop_reason=m.stop_reason,
                     error_message=m.error_message,
                     tool_call_count=sum(isinstance(b, Mo.ToolCall) for b in m.content or ()))
            if m.usage:
                r.update(input_tokens=m.usage.input, output_tokens=m.usage.output,
                         cache_read_tokens=m.usage.cache_read, cache_write_tokens=m.usage.cache_write,
                         total_tokens=m.usage.total_tokens, context_tokens=m.usage.context_tokens(),
                         cost_usd=m.usage.cost.total if m.usage.cost else None)
        if isinstance(m, Mo.ToolResultMessage):
            r.update(tool_name=m.tool_name, is_error=m.is_error)
        if isinstance(m, Mo.CustomMessage):
            r["custom_type"] = m.custom_type
        if m is not None:
            r["est_tokens"] = estimate_tokens(m)
        if isinstance(e, Mo.ModelChangeEntry):
            r.update(provider=e.provider, model=e.model_id)
        if isinstance(e, Mo.CompactionEntry):
            r.update(first_kept_entry_id=e.first_kept_entry_id, tokens_before=e.tokens_before,
                     summary_chars=js_len(e.summary),
                     est_tokens=estimate_tokens(Mo.CompactionSummaryMessage(summary=e.summary)))
        if isinstance(e, Mo.BranchSummaryEntry):
            r.update(from_id=e.from_id, summary_chars=js_len(e.summary),
                     est_tokens=estimate_tokens(Mo.BranchSummaryMessage(summary=e.summary)))
        if isinstance(e, Mo.CustomMessageEntry):
            r.update(custom_type=e.custom_type, est_tokens=estimate_tokens(Mo.CustomMessage(content=e.content)))
        if isinstance(e, Mo.CustomEntry):
            r["custom_type"] = e.custom_type
        if isinstance(e, Mo.LabelEntry):
            r.update(target_id=e.target_id, label=e.label)
        if isinstance(e, Mo.ThinkingLevelChangeEntry):
            r["thinking_level"] = e.thinking_level
        if isinstance(e, Mo.SessionInfoEntry):
            r["name"] = e.name
        r["timestamp_ms"] = ts_ms(e.timestamp)
        # what every pi row has beside other agents' rows
        r.update(agent="pi", side_node=False, root_session_id=r["session_id"],
                 cost_source="recorded" if r.get("cost_usd") is not None else None)
        out.append(r)
    return sf, out


def line_rows(path):
    """The same values from a plain per-line json.loads pass (clean pi v3 files only)."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    out = []
    for no, text in enumerate(lines[1:], start=2):
        if not text.strip():
            continue
        d = json.loads(text)
        t = d["type"]
        m = d.get("message") if t == "message" else None
        u = (m or {}).get("usage") if (m or {}).get("role") == "assistant" else None
        r = {"session_id": header["id"], "line_no": no, "entry_id": d.get("id"),
             "parent_id": d.get("parentId"), "type": t, "role": m.get("role") if m else None}
        if u:
            parts = [u.get(k) or 0 for k in ("input", "output", "cacheRead", "cacheWrite")]
            r.update(input_tokens=u.get("input"), total_tokens=u.get("totalTokens"),
                     context_tokens=u.get("totalTokens") or sum(parts),
                     cost_usd=(u.get("cost") or {}).get("total"))
        if m is not None:
            r["est_tokens"] = estimate_tokens_dict(m)
        if t == "custom_message":
            r["est_tokens"] = estimate_tokens_dict({"role": "custom", "content": d.get("content")})
        if t in ("compaction", "branch_summary"):
            r["est_tokens"] = math.ceil(js_len(d.get("summary") or "") / 4)
        if t == "model_change":
            r["model"] = d.get("modelId")
        out.append(r)
    return out
