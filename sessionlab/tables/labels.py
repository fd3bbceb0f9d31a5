"""Readable names for sessions: the session's name or first prompt, the day and the project folder.

Session ids are UUIDs, which nobody can tell apart; every place that lets a person pick or read a
session (widget pickers, plot ticks, the HTML report) uses :func:`session_labels` instead. The
name and the first entry's day come from the entries table (a Claude Code or Codex session's own
name from the sessions table: pass a Corpus, or ``names=``); the first prompt and the working
directory are read from the file itself (the header line and the first user messages' lines only,
found through ``line_no``), so labelling many sessions reads a few lines of each file. The first
prompt is the first user message a person typed: text the agent injects (Codex's
``<environment_context>`` and ``AGENTS.md`` instructions, Claude Code's ``isMeta`` caveats and
``<command-name>`` lines) is passed over. The folder comes from pi's header, a Codex
``session_meta`` or the ``cwd`` of a Claude Code line.

Session files are untrusted: the text is returned as it was written (callers escape it for HTML).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from . import file_facts
from .forest import as_table

__all__ = ["SessionLabel", "entry_previews", "label_column", "message_text", "session_labels"]

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


_TEXT_BLOCKS = ("text", "input_text", "output_text")  # (pi and Claude Code, Codex)
_PROMPT_LINES = 6  # user lines read per session to find the first typed prompt


def message_text(message: Any) -> str:
    """The plain text of a message dict's ``content`` (a string, or its text blocks joined; a
    Codex payload's ``input_text`` blocks too)."""
    if not isinstance(message, dict):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = " ".join(str(b.get("text", "")) for b in content
                        if isinstance(b, dict) and b.get("type") in _TEXT_BLOCKS)
    else:
        text = ""
    return " ".join(text.split())


def entry_previews(rows: pa.Table, entry_ids: Any) -> dict[str, str]:
    """The message text of some entries of one session's rows, read back from their lines (the
    table holds no text): ``entry_id -> text`` (whitespace collapsed; ``""`` for an entry with no
    text or whose line cannot be read, e.g. in a store)."""
    wanted = set(entry_ids)
    ids, lines, files = (rows[c].to_pylist() for c in ("entry_id", "line_no", "file"))
    where: dict[str, dict[int, str]] = {}
    for eid, line, f in zip(ids, lines, files):
        if eid in wanted and line is not None and f:
            where.setdefault(f, {})[int(line)] = eid
    out = {eid: "" for eid in wanted}
    for f, by_line in where.items():
        for line, obj in _read_lines(f, set(by_line)).items():
            if isinstance(obj, dict):
                msg = obj.get("message") or obj.get("payload") or obj
                out[by_line[line]] = message_text(msg) or " ".join(str(obj.get("summary") or "").split())
    return out


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


def _typed_prompt(lines: dict[int, Any], at: list[int]) -> tuple[str, str | None]:
    """(the first prompt a person typed, the ``cwd`` its line names) among user message lines."""
    texts = []
    cwd = None
    for ln in at:
        obj = lines.get(ln)
        if not isinstance(obj, dict):
            continue
        cwd = cwd or (obj.get("cwd") if isinstance(obj.get("cwd"), str) else None)
        text = message_text(obj.get("message") if "message" in obj else obj.get("payload"))
        texts.append(text)
        injected = obj.get("isMeta") or text.startswith(("<", "# AGENTS.md", "Caveat: The messages below"))
        if text and not injected:
            return text, cwd
    return next((t for t in texts if t), ""), cwd


def _header_cwd(header: dict[str, Any]) -> str | None:
    cwd = header.get("cwd")
    if not isinstance(cwd, str) and isinstance(header.get("payload"), dict):  # a Codex session_meta
        cwd = header["payload"].get("cwd")
    return cwd if isinstance(cwd, str) else None


def session_labels(entries, *, names: dict[str, Any] | None = None) -> dict[str, SessionLabel]:
    """A :class:`SessionLabel` per session of an entries table, in table order.

    The name is the sessions table's (``names``: session id -> name, as a corpus's sessions table
    gives them, agents' own titles included; given a Corpus, its sessions table's), else the facts
    module's from the table's rows.

    Example:
        >>> from sessionlab import entries_table  # doctest: +SKIP
        >>> labels = session_labels(entries_table("data/sessions"))  # doctest: +SKIP
        >>> labels["b627ef1d-8e91-479a-a1c3-a39e50c19172"].text  # doctest: +SKIP
        'Release prep · 2025-12-08 · rust-cli · b627ef1d'
    """
    from .corpus import Corpus

    if names is None and isinstance(entries, Corpus):
        names = dict(zip(entries.sessions["session_id"].to_pylist(), entries.sessions["name"].to_pylist()))
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
            s = first[sid] = {"file": f, "prompt_lines": [], "ts": None,
                              "name": names.get(sid) if names is not None else by_file.get(f)}
        if f != s["file"]:
            continue
        if typ == "message" and role == "user" and len(s["prompt_lines"]) < _PROMPT_LINES and line is not None:
            s["prompt_lines"].append(line)
        if ts is not None and (s["ts"] is None or ts < s["ts"]):
            s["ts"] = ts
    out: dict[str, SessionLabel] = {}
    for sid, s in first.items():
        lines = _read_lines(s["file"], {1, *s["prompt_lines"]}) if s["file"] else {}
        first_line = lines.get(1)
        header: dict[str, Any] = first_line if isinstance(first_line, dict) else {}
        prompt, line_cwd = _typed_prompt(lines, s["prompt_lines"])
        cwd = _header_cwd(header) or line_cwd
        folder = cwd.rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1] if cwd else None
        name = s["name"]
        out[sid] = SessionLabel(session_id=sid, file=s["file"], name=name, first_prompt=prompt or None,
                                day=s["ts"].strftime("%Y-%m-%d") if s["ts"] is not None else None,
                                folder=folder or None, cwd=cwd)
    return out


def label_column(table: pa.Table, labels: dict[str, SessionLabel]) -> pa.Array:
    """The label text of each row's ``session_id`` (the id itself when unknown)."""
    ids = table["session_id"].to_pylist()
    return pa.array([labels[i].text if i in labels else (i or "(none)") for i in ids], pa.string())
