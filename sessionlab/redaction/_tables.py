"""Redacting the tables of a corpus column by column, and the columns of the tables redaction adds.

Which columns are text (redacted) and which are not (ids, enumerations, numbers: copied) is declared
here once, per table; a test holds every string column of every table to one of the two lists.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..tables import Column, schema_of
from ._redactor import Redactor

__all__ = ["TEXT_COLUMNS", "REDACTION_COLUMNS", "TEXT_VALUE_COLUMNS", "REDACTION_SCHEMA", "TEXT_VALUE_SCHEMA",
           "redact_table", "records_table"]

#: the text columns of each table: redacted; every other column is copied unchanged
TEXT_COLUMNS: dict[str, tuple[str, ...]] = {
    "entries": ("file", "error_message", "label", "name", "system_json", "tool_name", "subagent_type"),
    "sessions": ("file", "cwd", "parent_session", "name"),
    "issues": ("file", "message", "excerpt"),
    "labels": ("file", "label"),
}

_S, _I32 = pa.string(), pa.int32()
REDACTION_COLUMNS: tuple[Column, ...] = (
    Column("source", _S, "Where the text was: 'entries', 'sessions', 'issues' or 'labels' (a table column), "
           "or 'file' (a value of a session file's line, as in the texts table)."),
    Column("session_id", _S, "Session of the row or file (null when the file has none)."),
    Column("file", _S, "The file's path, redacted (as in the redacted tables)."),
    Column("line_no", _I32, "1-based line of the file, or the entry's line for a table row; null for sessions, "
           "issues and labels rows."),
    Column("entry_id", _S, "Entry of the row or line, when it has one."),
    Column("column", _S, "The table column, or the JSON keys leading to the value in the line, dotted "
           "(message.content.text; '(line)' for a line that is not whole JSON, redacted as text)."),
    Column("kind", _S, "What was found: a detect-secrets type (aws-access-key, json-web-token, "
           "base64-high-entropy-string...) or a rule of sessionlab.redaction (email, home-path, user, host, "
           "private-key, openai-key...)."),
    Column("placeholder", _S, "What replaced it ([REDACTED-<kind>-<n>], the same for the same value in the "
           "corpus; '~' for a home folder). Never the value itself."),
)
TEXT_VALUE_COLUMNS: tuple[Column, ...] = (
    Column("session_id", _S, "Session of the file."),
    Column("file", _S, "The file's path, redacted."),
    Column("line_no", _I32, "1-based line of the file."),
    Column("entry_id", _S, "Entry id of the line (its top-level id or uuid), when it has one."),
    Column("field", _S, "The JSON keys leading to the value, dotted (message.content.text, "
           "payload.arguments...)."),
    Column("text", _S, "The value, redacted: message text, thinking, tool calls' arguments and results, "
           "summaries, labels, names, paths..."),
)
REDACTION_SCHEMA = schema_of(REDACTION_COLUMNS)
TEXT_VALUE_SCHEMA = schema_of(TEXT_VALUE_COLUMNS)


def records_table(rows: list[tuple]) -> pa.Table:
    """The redactions table of ``rows`` (tuples in :data:`REDACTION_COLUMNS` order)."""
    cols: list = list(zip(*rows)) if rows else [() for _ in REDACTION_COLUMNS]
    return pa.table([pa.array(list(c), type=f.type) for c, f in zip(cols, REDACTION_SCHEMA)], schema=REDACTION_SCHEMA)


def _column(table: pa.Table, name: str) -> list:
    return table[name].to_pylist() if name in table.column_names else [None] * table.num_rows


def redact_table(table: pa.Table, columns: tuple[str, ...], redactor: Redactor, *, source: str,
                 rows: list[tuple]) -> pa.Table:
    """``table`` with its text ``columns`` redacted (the others as they are); what was replaced is
    appended to ``rows`` as redactions records."""
    found_at: list[tuple[str, np.ndarray, tuple]] = []
    for name in columns:
        if name not in table.column_names:
            continue
        col = table[name].combine_chunks()
        enc = pc.dictionary_encode(col)
        # one redaction per distinct value (a loop over values, not rows)
        done = [redactor.text(v) for v in enc.dictionary.to_pylist()]
        new = pa.array([d[0] for d in done], type=col.type).take(enc.indices)
        codes = None
        for k, (_, found) in enumerate(done):
            if found:
                codes = np.asarray(enc.indices.fill_null(-1)) if codes is None else codes
                found_at.append((name, np.nonzero(codes == k)[0], found))
        table = table.set_column(table.column_names.index(name), name, new)
    if found_at:
        sessions, entries, files = (_column(table, c) for c in ("session_id", "entry_id", "file"))
        lines = _column(table, "line_no") if source == "entries" else [None] * table.num_rows
        for name, at, found in found_at:
            for r in at.tolist():
                rows += [(source, sessions[r], files[r], lines[r], entries[r], name, kind, p) for kind, p in found]
    return table
