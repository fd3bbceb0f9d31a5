"""Hermes Agent sessions (``~/.hermes/state.db``, SQLite).

Hermes keeps its sessions in one SQLite store: table ``sessions`` (``id``, ``source``, ``model``,
``billing_provider``, ``parent_session_id``: a continuation after compression, ``started_at``
in seconds, ``title``, and the session's running totals ``input_tokens``, ``output_tokens``,
``cache_read_tokens``, ``cache_write_tokens``, ``reasoning_tokens``, ``estimated_cost_usd``,
``actual_cost_usd``: recorded when above zero; an estimate, or a zero of a subscription, is priced
here) and table ``messages`` (``role``, ``content``, ``tool_calls`` in OpenAI's
shape, ``tool_name``, ``timestamp`` in seconds, ``finish_reason``). The messages are a chain; the
totals are one usage row at ``started_at`` (no per-call usage is stored). Each session is one member
path, ``state.db#<session id>``; the store is opened read-only.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Any

from ..pi.rules import CHARS_PER_TOKEN
from ._chain import SqliteStore, iso_ms, loads, sessions_with_messages, sqlite_names
from ._parts import database_members
from ._rows import agent_file, as_int, totals_row
from ._spec import AgentSpec, home_path, member_path, one_member, spend_only

__all__ = ["SPEC", "roots", "files", "read"]

DB_NAME = "state.db"
_ROLES = {"user": "user", "assistant": "assistant", "tool": "toolResult", "system": "system"}


def roots() -> list[Path]:
    """The folders of ``$HERMES_HOME`` (comma-separated), else ``~/.hermes``."""
    env = os.environ.get("HERMES_HOME")
    if env:
        return [home_path(p) for p in env.split(",") if p.strip()]
    return [Path.home() / ".hermes"]


def files(folders: list[Path], errors: list[tuple[str, str]] | None = None) -> list[str]:
    """Every session of ``state.db`` in each folder, by start time (a folder named twice: once)."""
    return database_members(folders, DB_NAME, "SELECT id FROM sessions ORDER BY started_at, id", errors)


def _has_hermes_tables(db: str) -> bool:
    return {"sessions", "messages"} <= sqlite_names(db, "SELECT name FROM sqlite_master WHERE type = 'table'")


def _seconds_iso(v: Any) -> str | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
        return None
    return iso_ms(v if v > 1e12 else v * 1000)


def _tool_calls(raw: Any) -> list[dict]:
    try:
        calls = loads(raw) if isinstance(raw, str) and raw.strip() else []
    except ValueError:
        return []
    return [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []


def _message_row(m: dict) -> dict:
    calls = _tool_calls(m.get("tool_calls"))
    names = [(c.get("function") or {}).get("name") for c in calls]
    text = len(m.get("content") or "") + len(m.get("reasoning") or "")
    finish = m.get("finish_reason") or None
    return {"entry_id": f"m{m['id']}", "role": _ROLES.get(str(m.get("role"))),
            "timestamps": _seconds_iso(m.get("timestamp")),
            "tool_call_count": len(calls), "tool_name": (names[0] if names else m.get("tool_name")) or None,
            "stop_reason": finish, "is_error": finish == "error", "est_tokens": -(-text // CHARS_PER_TOKEN)}


def read(path: str, fh: IO[bytes]):
    """A session of ``state.db`` (``<db>#<session id>``): its messages and one row of its totals."""
    db, sid = one_member(path)
    return read_members(db, [sid])[0]


# the columns of ``sessions`` read
_COLUMNS = ("model", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens",
            "actual_cost_usd", "started_at", "billing_provider", "title")


def read_members(db: str, sids: list[str]) -> list:
    """Sessions of ``state.db``, together (:attr:`~sessionlab.agents.AgentSpec.members`)."""
    # (the usage is the session's totals: a spend-only read needs no message)
    found = sessions_with_messages(db, sids, "timestamp, id", _COLUMNS, messages=not spend_only())
    return [_session_file(db, sid, *got) for sid, got in zip(sids, found, strict=True)]


def _session_file(db: str, sid: str, s: dict, msgs: list[dict], parent: str | None, root: str | None):
    rows = [_message_row(m) for m in msgs]
    model = (s.get("model") or "").strip()
    inp, out, cr, cw, reason = (as_int(s.get(k)) for k in ("input_tokens", "output_tokens", "cache_read_tokens",
                                                         "cache_write_tokens", "reasoning_tokens"))
    cost = s.get("actual_cost_usd")  # what the provider billed; an estimate (Hermes' own pricing) is priced here
    cost = float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost > 0 else None
    ts = _seconds_iso(s.get("started_at"))
    if model and ts is not None and (inp + out + cr + cw + reason > 0 or cost):
        total = totals_row(f"hermes:{sid}", ts, model, s.get("billing_provider") or None, inp, out + reason, cr, cw,
                           reason, cost)
        total["parent_id"] = None
        rows.insert(0, total)
    return agent_file(member_path(db, sid), "hermes", rows, {"session_id": sid, "name": s.get("title") or None,
                                                              "parent_session_id": parent, "root_session_id": root})


_STORE = SqliteStore(DB_NAME, _has_hermes_tables)


SPEC = AgentSpec(
    name="hermes", title="Hermes", recognise=lambda obj: False, recognise_file=_STORE.recognise_file,
    opens=_STORE.opens,
    roots=roots,
    env=("HERMES_HOME",), files=files, reader="sessionlab.agents.hermes:read",
    members="sessionlab.agents.hermes:read_members", calls_need_usage=True, priced=True,
    folder_doc="`state.db` (SQLite, opened read-only) in `$HERMES_HOME` (comma-separated), else in `~/.hermes`; "
               "each session is `state.db#<session id>` (a session's running totals, no calls)",
)
