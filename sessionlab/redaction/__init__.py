"""Safe sharing: redacted copies of sessions' text, tables and files.

Session files are full of secrets: API keys pasted into prompts, tokens in tool output, ``.env``
files the agent read, private paths, emails and host names. :func:`redact` gives a copy of a
corpus with every text redacted (the tables' text columns, and every text value of the files:
messages, thinking, tool calls and results, summaries, labels, names, cwd, paths) and a
``redactions`` table saying what was replaced where (never the value itself);
:func:`export_sessions` writes redacted session files, each in its agent's own format and still
loadable. Token and cost columns are never touched.

What is found: detect-secrets' plugins (cloud keys, tokens, private keys, JWTs, high-entropy strings,
keyword assignments; the ``[redact]`` extra) and the rules of :mod:`._rules` (more key formats, home
folders and the user names they reveal, emails, private IPs and host names). A value gets the same
placeholder, ``[REDACTED-<kind>-<n>]``, everywhere in one call, so a reader can still follow it;
``/home/alice/x`` becomes ``~/x``. What is and is not detected: ``docs/redaction.md``.

Example:
    >>> import sessionlab as sl  # doctest: +SKIP
    >>> r = sl.redact(sl.load("data/"))  # doctest: +SKIP
    >>> r.redactions_df().kind.value_counts()  # doctest: +SKIP
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ..errors import ArgumentTypeError
from ..tables import Corpus, load
from ._files import common_root, learn_files, output_path, walk_file
from ._redactor import Redactor
from ._tables import (
    REDACTION_COLUMNS,
    TEXT_COLUMNS,
    TEXT_VALUE_COLUMNS,
    TEXT_VALUE_SCHEMA,
    records_table,
    redact_table,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["redact", "export_sessions", "Redacted", "Redactor", "TEXT_COLUMNS", "REDACTION_COLUMNS",
           "TEXT_VALUE_COLUMNS"]


def _pandas(table: pa.Table) -> pd.DataFrame:
    import pandas as pd

    return table.to_pandas(types_mapper=pd.ArrowDtype)


@dataclass
class Redacted:
    """A redacted copy of a corpus: its tables with every text column redacted, the text values of
    its files (``texts``), what was replaced (``redactions``) and, when written, the redacted files.

    Attributes:
        entries, sessions, issues, labels: The corpus's tables; the columns of
            :data:`TEXT_COLUMNS` redacted, every other column (ids, numbers, tokens, costs) equal.
        texts: One row per text value of the files' lines, redacted (columns in
            :data:`TEXT_VALUE_COLUMNS`): the message text, thinking, tool calls and results,
            summaries the tables do not hold.
        redactions: One row per replacement (columns in :data:`REDACTION_COLUMNS`): where, what
            kind, which placeholder; never the value.
        files: The redacted session files written (``redact(..., out=...)``), in load order.
    """

    entries: pa.Table
    sessions: pa.Table
    issues: pa.Table
    labels: pa.Table
    texts: pa.Table
    redactions: pa.Table
    files: list[Path] = field(default_factory=list)

    def entries_df(self) -> pd.DataFrame:
        return _pandas(self.entries)

    def sessions_df(self) -> pd.DataFrame:
        return _pandas(self.sessions)

    def issues_df(self) -> pd.DataFrame:
        return _pandas(self.issues)

    def labels_df(self) -> pd.DataFrame:
        return _pandas(self.labels)

    def texts_df(self) -> pd.DataFrame:
        return _pandas(self.texts)

    def redactions_df(self) -> pd.DataFrame:
        return _pandas(self.redactions)


def _texts_table(rows: list[tuple]) -> pa.Table:
    cols: list = list(zip(*rows)) if rows else [() for _ in TEXT_VALUE_COLUMNS]
    return pa.table([pa.array(list(c), type=f.type) for c, f in zip(cols, TEXT_VALUE_SCHEMA)], schema=TEXT_VALUE_SCHEMA)


def _as_table(data: Any) -> pa.Table | None:
    if isinstance(data, pa.Table):
        return data
    if type(data).__name__ == "DataFrame" and hasattr(data, "columns"):
        return pa.Table.from_pandas(data, preserve_index=False)
    return None


def _walk_files(corpus: Corpus, redactor: Redactor, out: str | os.PathLike[str] | None,
                rows: list[tuple]) -> tuple[pa.Table, list[Path]]:
    """Every file of the corpus redacted: its text values (and its copy under ``out``)."""
    files = [f for f in corpus.files if os.path.isfile(f)]
    sid = dict(zip(corpus.sessions["file"].to_pylist(), corpus.sessions["session_id"].to_pylist()))
    root = common_root(files)
    texts: list[tuple] = []
    written = []
    for f in files:  # one pass per file
        dest = None
        if out is not None:
            dest = output_path(redactor, f, root, out)
            dest.parent.mkdir(parents=True, exist_ok=True)
            written.append(dest)
        walk = walk_file(f, redactor, out=dest, texts=True)
        shown, s = redactor.text(f)[0], sid.get(f)
        rows += [("file", s, shown, no, e, where, kind, p) for no, e, where, kind, p in walk.found]
        texts += [(s, shown, no, e, where, text) for no, e, where, text in walk.texts]
    return _texts_table(texts), written


def redact(data: Any, *, out: str | os.PathLike[str] | None = None) -> Redacted:
    """A redacted copy of ``data``'s text (see the module doc for what is found).

    Args:
        data: A :class:`~sessionlab.Corpus`, a source for :func:`~sessionlab.load` (files, folders,
            globs), or one table (Arrow or pandas) whose text columns are redacted as the entries
            table's (then ``texts`` and the other tables are empty).
        out: A folder for redacted copies of the session files, in their own formats, at their
            paths below the files' common folder (redacted too). None: no files are written.

    Returns:
        A :class:`Redacted`. Its ``redactions`` table has the columns:
{columns}

    Example:
        >>> r = redact("tests/data/pi/generated/sessions")  # doctest: +SKIP
        >>> r.entries.num_rows, r.texts.column_names[-1]  # doctest: +SKIP
        (138, 'text')
    """
    redactor = Redactor()
    rows: list[tuple] = []
    table = _as_table(data)
    if table is not None:
        if out is not None:
            raise ArgumentTypeError("out", "out= needs a corpus or a source: a table has no files to copy")
        for f in _column_values(table, "file"):
            redactor.learn(f)
        entries = redact_table(table, TEXT_COLUMNS["entries"], redactor, source="entries", rows=rows)
        empty = entries.slice(0, 0)
        return Redacted(entries=entries, sessions=empty, issues=empty, labels=empty, texts=_texts_table([]),
                        redactions=records_table(rows))
    corpus = data if isinstance(data, Corpus) else load(data, on_bad_lines="skip", progress=False)
    learn_files(redactor, corpus.files)
    texts, written = _walk_files(corpus, redactor, out, rows)
    tables = {name: redact_table(getattr(corpus, name), cols, redactor, source=name, rows=rows)
              for name, cols in TEXT_COLUMNS.items()}
    return Redacted(**tables, texts=texts, redactions=records_table(rows), files=written)


def _column_values(table: pa.Table, name: str) -> list[str]:
    if name not in table.column_names:
        return []
    return [v for v in table[name].unique().to_pylist() if v]


redact.__doc__ = (redact.__doc__ or "").replace(
    "{columns}", "\n".join(f"            {c.name} ({c.type}): {c.doc}" for c in REDACTION_COLUMNS))


def export_sessions(source: Any, out: str | os.PathLike[str], *, redacted: bool = True) -> list[Path]:
    """Copy the session files of ``source`` (a Corpus or a source for :func:`~sessionlab.load`) into
    the folder ``out``, each at its path below the files' common folder, redacted line by line in its
    own format (``redacted=False``: as they are). Returns the files written.

    Example:
        >>> export_sessions("data/", "/tmp/shared")  # doctest: +SKIP
    """
    if redacted:
        return redact(source, out=out).files
    corpus = source if isinstance(source, Corpus) else load(source, on_bad_lines="skip", progress=False)
    files = [f for f in corpus.files if os.path.isfile(f)]
    root = common_root(files)
    written = []
    for f in files:
        dest = output_path(None, f, root, out)
        dest.parent.mkdir(parents=True, exist_ok=True)
        walk_file(f, None, out=dest)
        written.append(dest)
    return written



