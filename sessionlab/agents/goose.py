"""Goose sessions (``sessions.db``, SQLite, under ``$GOOSE_PATH_ROOT/data/sessions`` or
``~/.local/share/goose/sessions``).

Goose keeps every session in one store: table ``sessions`` (``id``, ``name``, ``session_type``:
``user``, ``sub_agent``..., ``working_dir``, ``created_at``, ``provider_name``,
``model_config_json``: ``{"model_name": ...}``, ``parent_session_id``, the last request's
``input_tokens``, ``output_tokens``, ``total_tokens`` and the session's running totals
``accumulated_input_tokens``, ``accumulated_output_tokens``, ``accumulated_total_tokens``, with
``accumulated_cache_*_tokens`` and ``accumulated_cost`` in newer schemas), table ``messages``
(``role``, ``content_json``: typed parts, ``text``, ``thinking``, ``toolRequest``,
``toolResponse``; ``created_timestamp`` in seconds) and, in newer schemas, ``usage_ledger`` (one row
per request). The messages are a chain; the usage read is ccusage's: the running totals as one
usage row at ``created_at`` (``usage_kind = 'session_total'``), each count falling back to the last
request's when the running one is missing; tokens of the total beyond input and output are
reasoning, priced as output; the cache columns are not read (the input counts the cached prompt,
priced as input). A session without a model has no usage. Each session is one member path,
``sessions.db#<session id>``; the store is opened read-only.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from typing import IO, Any

from ..pi.rules import CHARS_PER_TOKEN
from ._chain import SqliteStore, database_members, iso_ms, loads, sessions_with_messages, sqlite_names
from ._rows import SpendRows, agent_file, row_values, totals_row
from ._spec import AgentSpec, home_path, member_path, one_member, spend_only

__all__ = ["SPEC", "roots", "files", "read", "read_members", "spend_members", "session_time"]

DB_NAME = "sessions.db"


def roots() -> list[Path]:
    """``$GOOSE_PATH_ROOT/data/sessions``, else Goose's data folders (XDG, macOS, the Block one)."""
    env = (os.environ.get("GOOSE_PATH_ROOT") or "").strip()
    if env:
        return [home_path(env) / "data" / "sessions"]
    home = Path.home()
    return [home / ".local" / "share" / "goose" / "sessions", home / "Library" / "Application Support" / "goose" /
            "sessions", home / ".local" / "share" / "Block" / "goose" / "sessions"]


def files(folders: list[Path], errors: list[tuple[str, str]] | None = None) -> list[str]:
    """Every session of ``sessions.db`` in each folder, by creation time (a store found twice: once)."""
    return database_members(folders, DB_NAME, "SELECT id FROM sessions ORDER BY created_at, id", errors)


def _has_goose_tables(db: str) -> bool:
    return {"id", "working_dir", "model_config_json"} <= sqlite_names(db, "PRAGMA table_info(sessions)", 1)


def session_time(v: Any) -> str | None:
    """``created_at`` as ISO text: seconds or milliseconds, RFC 3339, ``YYYY-MM-DD HH:MM:SS`` (UTC, with
    or without a ``Z``: read without :mod:`datetime`), a date."""
    s = str(v).strip() if v is not None else ""
    if s.lstrip("-").isdigit():
        n = int(s)
        return iso_ms(n if n > 1_000_000_000_000 else n * 1000) if n > 0 else None
    m = _PLAIN.fullmatch(s)
    if m is not None and "1971" <= m[1] < "2100" and m[2] < "24" and m[3] < "60" and m[4] < "60" and _is_day(s[:10]):
        return f"{s[:10]}T{s[11:19]}.000Z"  # (Goose's own form, every session's: what _parsed_time gives it)
    return _parsed_time(s)


_PLAIN = re.compile(r"([0-9]{4})-[0-9]{2}-[0-9]{2}[ T]([0-9]{2}):([0-9]{2}):([0-9]{2})Z?")  # (UTC either way)


@functools.lru_cache(maxsize=4096)
def _is_day(day: str) -> bool:
    """Whether ``YYYY-MM-DD`` is a day of the calendar (a load's sessions fall on few days)."""
    from datetime import date

    try:
        date.fromisoformat(day)
    except ValueError:
        return False
    return True


def _parsed_time(s: str) -> str | None:
    """:func:`session_time` of text that is not a number, by :meth:`datetime.fromisoformat`."""
    from datetime import UTC, datetime

    if len(s) == 10:
        s += "T00:00:00"
    try:
        t = datetime.fromisoformat(s.replace("Z", "+00:00"))
    except ValueError:
        return None
    t = t if t.tzinfo is not None else t.replace(tzinfo=UTC)
    try:
        return iso_ms(t.timestamp() * 1000)
    except (ValueError, OverflowError):  # (a time its offset moves out of the calendar: 0001-01-01 00:00+02:00)
        return None


def _count(s: dict, *cols: str) -> int | None:
    """The first of the columns above zero."""
    for c in cols:
        v = s.get(c)
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            return v
    return None


def _model(raw: Any) -> str | None:
    return _model_of(raw) if isinstance(raw, str) else None


@functools.lru_cache(maxsize=1024)
def _model_of(raw: str) -> str | None:
    """The model a ``model_config_json`` names (sessions of one model share the text)."""
    try:
        d = loads(raw)
    except ValueError:
        return None
    m = d.get("model_name") if isinstance(d, dict) else None
    return m.strip() or None if isinstance(m, str) else None


def _totals(s: dict, sid: str, ts: str | None) -> dict | None:
    model = _model(s.get("model_config_json"))
    if model is None or ts is None:
        return None
    inp = _count(s, "accumulated_input_tokens", "input_tokens") or 0
    out = _count(s, "accumulated_output_tokens", "output_tokens") or 0
    total = _count(s, "accumulated_total_tokens", "total_tokens") or inp + out
    if inp == 0 and out == 0 and total == 0:
        return None
    reason = max(total - inp - out, 0)
    provider = (s.get("provider_name") or "").strip() or None
    row = totals_row(f"goose:{sid}", ts, model, provider, inp, out + reason, 0, 0, reason, None)
    row["parent_id"] = None
    return row


def _message_row(m: dict, tools: dict[str, str]) -> dict:
    try:
        parts = loads(m.get("content_json") or "[]")
    except ValueError:
        parts = []
    parts = [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []
    chars = sum(len(p.get("text") or "") + len(p.get("thinking") or "") for p in parts)
    calls = [p for p in parts if p.get("type") in ("toolRequest", "frontendToolRequest")]
    names = [((p.get("toolCall") or {}).get("value") or {}).get("name") for p in calls]
    for p, n in zip(calls, names, strict=True):
        if isinstance(p.get("id"), str) and isinstance(n, str):
            tools[p["id"]] = n
    results = [p for p in parts if p.get("type") == "toolResponse"]
    role = "toolResult" if results and len(results) == len(parts) else m.get("role")
    failed = [p for p in results if (p.get("toolResult") or {}).get("status") == "error"]
    name = names[0] if names else tools.get(results[0].get("id")) if results else None
    return {"entry_id": m.get("message_id") or f"m{m['id']}", "message_id": m.get("message_id"),
            "role": role if role in ("user", "assistant", "toolResult") else None,
            "timestamps": session_time(m.get("created_timestamp")), "tool_call_count": len(calls),
            "tool_name": name if isinstance(name, str) else None, "is_error": bool(failed),
            "error_message": (failed[0].get("toolResult") or {}).get("error") if failed else None,
            "est_tokens": -(-chars // CHARS_PER_TOKEN)}


def read(path: str, fh: IO[bytes] | None):
    """A session of ``sessions.db`` (``<db>#<session id>``): its messages and one row of its totals."""
    db, sid = one_member(path)
    return read_members(db, [sid])[0]


# the columns of ``sessions`` read (the others, ``recipe_json``, ``extension_data``..., are not fetched)
_COLUMNS = ("name", "working_dir", "created_at", "provider_name", "model_config_json", "accumulated_input_tokens",
            "input_tokens", "accumulated_output_tokens", "output_tokens", "accumulated_total_tokens", "total_tokens")


def read_members(db: str, sids: list[str]) -> list:
    """Sessions of ``sessions.db``, together (:attr:`~sessionlab.agents.AgentSpec.members`)."""
    # (the usage is the session's totals: a spend-only read needs no message)
    found = sessions_with_messages(db, sids, "created_timestamp, id", _COLUMNS, messages=not spend_only())
    return [_session_file(db, sid, *got) for sid, got in zip(sids, found, strict=True)]


def spend_members(db: str, sids: list[str]) -> SpendRows:
    """A usage report's read of sessions of ``sessions.db``: each one's totals row (when it has
    usage) and its facts, as :func:`read_members` gives them, without an object per session."""
    found = sessions_with_messages(db, sids, "created_timestamp, id", _COLUMNS, messages=False)
    rows, counts, names, cwds = [], [], [], []
    for sid, (s, _, _, _) in zip(sids, found, strict=True):
        total = _totals(s, sid, session_time(s.get("created_at")))
        if total is None:
            counts.append(0)
        else:
            rows.append(row_values(total, 1, None))
            counts.append(1)
        name, cwd = _name_cwd(s)
        names.append(name)
        cwds.append(cwd)
    facts = {"session_id": list(sids), "name": names, "cwd": cwds, "parent_session_id": [f[2] for f in found],
             "root_session_id": [f[3] for f in found]}
    return SpendRows(rows, counts, facts)


def _session_file(db: str, sid: str, s: dict, msgs: list[dict], parent: str | None, root: str | None):
    tools: dict[str, str] = {}
    rows = [_message_row(m, tools) for m in msgs]
    total = _totals(s, sid, session_time(s.get("created_at")))
    if total is not None:
        rows.insert(0, total)
    name, cwd = _name_cwd(s)
    return agent_file(member_path(db, sid), "goose", rows, {"session_id": sid, "name": name, "cwd": cwd,
                                                             "parent_session_id": parent, "root_session_id": root})


def _name_cwd(s: dict) -> tuple[str | None, str | None]:
    """A session row's name and working folder (None for an empty one)."""
    return s.get("name") or None, s.get("working_dir") or None


_STORE = SqliteStore(DB_NAME, _has_goose_tables)


SPEC = AgentSpec(
    name="goose", title="Goose", recognise=lambda obj: False, recognise_file=_STORE.recognise_file,
    opens=_STORE.opens,
    roots=roots, env=("GOOSE_PATH_ROOT",), files=files, reader="sessionlab.agents.goose:read",
    members="sessionlab.agents.goose:read_members", spend_members="sessionlab.agents.goose:spend_members",
    calls_need_usage=True, priced=True,
    folder_doc="`sessions.db` (SQLite, opened read-only) in `$GOOSE_PATH_ROOT/data/sessions`, else in "
               "`~/.local/share/goose/sessions` (and the macOS and `Block/goose` folders); each session is "
               "`sessions.db#<session id>` (a session's running totals, no calls)",
)
