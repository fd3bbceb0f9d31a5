"""Readable names for sessions: pi's name or the first prompt, the day and the project folder.

Session ids are UUIDs, which nobody can tell apart; every place that lets a person pick or read a
session (widget pickers, plot ticks, the HTML report) uses :func:`session_labels` instead. The
name and the first entry's day come from the entries table; the first prompt and the working
directory are read from the file itself (the header line and the first user message's line only,
found through ``line_no``), so labelling many sessions reads a few lines of each file.

Session files are untrusted: the text is returned as it was written (callers escape it for HTML).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from . import file_facts
from .forest import as_table

__all__ = ["SessionLabel", "label_column", "message_text", "session_labels"]

TITLE_CHARS = 48


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionLabel:
    """What a person needs to recognise a session."""

    session_id: str
    file: str | None
    name: str | None  # the session's name (the facts module's: pi 1.6's getSessionName)
    first_prompt: str | None  # text of the first user message, whitespace collapsed
    day: str | None  # UTC day of the first timestamped entry, YYYY-MM-DD
    folder: str | None  # last part of the header's cwd
    cwd: str | None

    @property
    def title(self) -> str:
        """The name, else the first prompt (cut to a line), else ``"(no prompt)"``."""
        text = self.name or self.first_prompt
        if not text:
            return "(no prompt)"
        return text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1] + "…"

    @property
    def text(self) -> str:
        """``title · day · folder · id prefix`` (the parts that are known)."""
        parts = [self.title, self.day, self.folder, self.session_id[:8]]
        return " · ".join(p for p in parts if p)


def message_text(message: Any) -> str:
    """The plain text of a message dict's ``content`` (a string, or its text blocks joined)."""
    if not isinstance(message, dict):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = " ".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    else:
        text = ""
    return " ".join(text.split())


def _read_lines(path: str, wanted: set[int]) -> dict[int, Any]:
    """The JSON values of some 1-based lines of a file (lines that fail to parse are left out)."""
    out: dict[int, Any] = {}
    if not wanted:
        return out
    last = max(wanted)
    try:
        with open(path, "rb") as fh:
            for i, line in enumerate(fh, 1):  # stops at the last wanted line: usually a few dozen
                if i in wanted:
                    try:
                        out[i] = json.loads(line)
                    except ValueError:
                        pass
                if i >= last:
                    break
    except OSError:
        pass
    return out


def session_labels(entries, *, names: dict[str, str | None] | None = None) -> dict[str, SessionLabel]:
    """A :class:`SessionLabel` per session of an entries table, in table order.

    The name is the sessions table's (``names``: session id -> name, as a corpus's sessions table
    gives them, agents' own titles included), else the facts module's from the table's rows.

    Example:
        >>> from sessionlab import entries_table  # doctest: +SKIP
        >>> labels = session_labels(entries_table("data/sessions"))  # doctest: +SKIP
        >>> labels["b627ef1d-8e91-479a-a1c3-a39e50c19172"].text  # doctest: +SKIP
        'Release prep · 2025-12-08 · rust-cli · b627ef1d'
    """
    table = as_table(entries)
    if table.num_rows == 0:
        return {}
    if names is None:
        facts = file_facts(table)
        by_file = dict(zip(facts["file"].to_pylist(), facts["name"].to_pylist()))
    cols = ["session_id", "file", "line_no", "type", "role", "timestamp"]
    d = table.select(cols).to_pydict()
    first: dict[str, dict[str, Any]] = {}
    for sid, f, line, typ, role, ts in zip(*(d[c] for c in cols)):  # one pass, no parsing
        if sid is None:
            continue
        s = first.get(sid)
        if s is None:
            s = first[sid] = {"file": f, "prompt_line": None, "ts": None,
                              "name": names.get(sid) if names is not None else by_file.get(f)}
        if f != s["file"]:
            continue
        if typ == "message" and role == "user" and s["prompt_line"] is None and line is not None:
            s["prompt_line"] = line
        if ts is not None and (s["ts"] is None or ts < s["ts"]):
            s["ts"] = ts
    out: dict[str, SessionLabel] = {}
    for sid, s in first.items():
        lines = _read_lines(s["file"], {1} | ({s["prompt_line"]} if s["prompt_line"] else set())) \
            if s["file"] else {}
        first_line = lines.get(1)
        header: dict[str, Any] = first_line if isinstance(first_line, dict) else {}
        cwd = header.get("cwd") if isinstance(header.get("cwd"), str) else None
        entry = lines.get(s["prompt_line"]) if s["prompt_line"] else None
        prompt = message_text(entry.get("message")) if isinstance(entry, dict) else ""
        folder = cwd.rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1] if cwd else None
        out[sid] = SessionLabel(session_id=sid, file=s["file"], name=s["name"], first_prompt=prompt or None,
                                day=s["ts"].strftime("%Y-%m-%d") if s["ts"] is not None else None,
                                folder=folder or None, cwd=cwd)
    return out


def label_column(table: pa.Table, labels: dict[str, SessionLabel]) -> pa.Array:
    """The label text of each row's ``session_id`` (the id itself when unknown)."""
    ids = table["session_id"].to_pylist()
    return pa.array([labels[i].text if i in labels else (i or "(none)") for i in ids], pa.string())
