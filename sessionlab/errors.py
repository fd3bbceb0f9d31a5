"""Errors and warnings of sessionlab.

Every exception sessionlab raises derives from :class:`SessionLabError` and also from the
matching builtin, so ``except KeyError`` or ``except ValueError`` keeps working::

    SessionLabError (Exception)
    ├── BadInputError (ValueError)        a session file broke a rule and on_bad_lines="raise"
    ├── UnsafePathError (ValueError)      a repo path or session id would leave the repo root
    ├── ReadOnlyFormatError (ValueError)  a write to a format sessionlab only reads (pi's v4 files)
    ├── ArgumentTypeError (TypeError)     a public function got an argument of the wrong type
    ├── ArgumentValueError (ValueError)   ... or a value it does not allow; ``argument`` names it
    │   ├── OptionError                   an option has a value it does not take (``rules=``,
    │   │   │                             ``on_bad_lines=``, ``thinking_level=``...); the message lists
    │   │   │                             the values it takes (see :func:`check_option`)
    │   │   └── RulesMismatchError        a table built under one pi release's rules, asked for another's
    │   ├── UnstorableValueError          a value JSON cannot hold as it is (NaN, 10**30, a set...)
    │   └── MissingColumnError            a table lacks a column (or a value) an analysis needs
    ├── SourceNotFoundError (FileNotFoundError)  a path given to a loader names no file, folder or match
    ├── WriterClosedError (ValueError)    a write through a closed SessionWriter
    ├── TableFreedError (ReferenceError)  a Forest outlived the table it was built from
    ├── MissingDependencyError (ImportError)  an optional piece needs an extra that is not installed
    ├── NativeUnavailableError (RuntimeError) the C scanner was asked for but is not built (or refused)
    ├── CacheError (OSError)              the cache folder is not the cache's, or could not be cleared
    └── SessionError                      a session operation failed; ``code`` says which
        ├── EntryNotFoundError (KeyError)     code "not_found"
        ├── InvalidForkTargetError (ValueError) code "invalid_fork_target"
        ├── CycleError (ValueError)           code "cycle": a parent chain loops
        ├── InvalidEntryError (ValueError)    code "invalid_entry": an id missing, repeated, a leaf record as target
        ├── SessionNotFoundError (FileNotFoundError) code "session_not_found": no such session or file
        ├── AmbiguousSessionError (ValueError) code "ambiguous_session": an id names several sessions
        ├── SessionDeletedError (FileNotFoundError) code "deleted": the session's file is gone
        └── StaleSessionError                 code "stale": the file changed under this handle

    SessionLabWarning (UserWarning)
    ├── BadLinesWarning                   one per file read with on_bad_lines="warn"
    ├── NativeLoaderWarning               the C scanner is stale (built from other sources) or
    │                                     failed on files it had accepted (a bug)
    ├── CacheWarning                      the cache was damaged: the files it held were read afresh
    └── UnrecordedDataWarning             an analysis met an agent whose files do not record what it needs
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "SessionLabError",
    "BadInputError",
    "UnsafePathError",
    "OptionError",
    "check_option",
    "RulesMismatchError",
    "ReadOnlyFormatError",
    "CacheError",
    "SessionError",
    "EntryNotFoundError",
    "InvalidForkTargetError",
    "CycleError",
    "ArgumentTypeError",
    "ArgumentValueError",
    "UnstorableValueError",
    "SourceNotFoundError",
    "WriterClosedError",
    "TableFreedError",
    "MissingDependencyError",
    "NativeUnavailableError",
    "MissingColumnError",
    "InvalidEntryError",
    "SessionNotFoundError",
    "AmbiguousSessionError",
    "SessionDeletedError",
    "StaleSessionError",
    "SessionLabWarning",
    "BadLinesWarning",
    "NativeLoaderWarning",
    "UnrecordedDataWarning",
    "CacheWarning",
]


class SessionLabError(Exception):
    """Root of every sessionlab error."""


class BadInputError(SessionLabError, ValueError):
    """A session file has a problem and the reader was asked to raise.

    ``issues`` holds the :class:`~sessionlab.pi.io.LineIssue` records found so far.
    """

    def __init__(self, message: str, issues: list | None = None) -> None:
        super().__init__(message)
        self.issues = list(issues or [])


class UnsafePathError(SessionLabError, ValueError):
    """A session id or path would escape the repository root."""


class ReadOnlyFormatError(SessionLabError, ValueError):
    """A write was asked of a session in a format sessionlab reads but does not write (pi's v4)."""


class SourceNotFoundError(SessionLabError, FileNotFoundError):
    """A path given to a loader (``load``, ``read_parquet``) names no file, folder or glob match."""


class WriterClosedError(SessionLabError, ValueError):
    """A write was asked of a :class:`~sessionlab.pi.io.SessionWriter` after it was closed."""


class TableFreedError(SessionLabError, ReferenceError):
    """A :class:`~sessionlab.tables.forest.Forest` was asked for its table after the table was freed (it
    holds it weakly): keep a reference to the table."""


class MissingDependencyError(SessionLabError, ImportError):
    """An optional piece (plots, widgets, Dask) needs an extra that is not installed; the message
    says which (``pip install "sessionlab[viz]"``)."""


class NativeUnavailableError(SessionLabError, RuntimeError):
    """The native scanner was asked for directly but is not built, or was refused as stale."""


class CacheError(SessionLabError, OSError):
    """The loaders' cache folder cannot be used or cleared as asked: it is a symlink or not a
    folder (nothing is removed through it), or some of its files could not be removed."""


class SessionError(SessionLabError):
    """A session operation failed. ``code`` is a short machine-readable reason."""

    code: str = "session_error"

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code

    def __str__(self) -> str:  # KeyError would otherwise repr() the message
        return f"[{self.code}] {self.args[0]}"


class EntryNotFoundError(SessionError, KeyError):
    """An entry id is not in the session (code ``not_found``)."""

    def __init__(self, message: str) -> None:
        super().__init__("not_found", message)


class InvalidForkTargetError(SessionError, ValueError):
    """A fork target is not allowed (code ``invalid_fork_target``)."""

    def __init__(self, message: str) -> None:
        super().__init__("invalid_fork_target", message)


class CycleError(SessionError, ValueError):
    """A parent chain loops back on itself (code ``cycle``)."""

    def __init__(self, message: str) -> None:
        super().__init__("cycle", message)


class ArgumentTypeError(SessionLabError, TypeError):
    """An argument of a public function has the wrong type; ``argument`` is its name."""

    def __init__(self, argument: str, message: str) -> None:
        super().__init__(message)
        self.argument = argument


class ArgumentValueError(SessionLabError, ValueError):
    """An argument of a public function has a value it does not allow; ``argument`` is its name."""

    def __init__(self, argument: str, message: str) -> None:
        super().__init__(message)
        self.argument = argument


class UnstorableValueError(ArgumentValueError):
    """A value that JSON cannot hold as it is (NaN, infinity, an integer beyond 2**53, a non-string
    dict key, an object that is not JSON); ``argument`` is the path of the field."""


class OptionError(ArgumentValueError):
    """An option was given a value it does not take; the message lists the ones it does and
    ``argument`` names the option (``None`` where it is not one argument)."""

    def __init__(self, message: str, argument: str | None = None) -> None:
        super().__init__(argument, message)  # type: ignore[arg-type]


def check_option(argument: str, value: object, allowed: Iterable[object]) -> None:
    """Raise :class:`OptionError` unless ``value`` is one of ``allowed``; every option says it the
    same way: ``"on_bad_lines must be one of 'raise', 'warn', 'skip', not 'x'"``."""
    allowed = tuple(allowed)
    try:
        ok = value in allowed
    except (TypeError, ValueError):  # a value whose == is no bool (an array...)
        ok = False
    if not ok:
        raise OptionError(option_message(argument, value, allowed), argument)


def option_message(argument: str, value: object, allowed: Iterable[object]) -> str:
    """The message of a bad option value (:func:`check_option`)."""
    return f"{argument} must be one of {', '.join(map(repr, allowed))}, not {value!r}"


class RulesMismatchError(OptionError):
    """A table was built under one pi release's rules and a function was asked for another's:
    per-entry estimates differ between releases, so mixing them would give wrong numbers."""


class MissingColumnError(ArgumentValueError):
    """A table lacks a column an analysis needs, or holds null where it needs a value (a table built
    by hand, or written by an older sessionlab): ``column`` names it. Analyses never read the
    session files again; loading the files anew fills it."""

    def __init__(self, column: str, message: str) -> None:
        super().__init__("table", message)
        self.column = column


class InvalidEntryError(SessionError, ValueError):
    """An entry cannot be stored or used as asked (code ``invalid_entry``): no id, an id already
    used, or a seed ``leaf`` record given as a target."""

    def __init__(self, message: str) -> None:
        super().__init__("invalid_entry", message)


class SessionNotFoundError(SessionError, FileNotFoundError):
    """No session file at a path, or no session with an id (code ``session_not_found``)."""

    def __init__(self, message: str) -> None:
        super().__init__("session_not_found", message)


class AmbiguousSessionError(SessionError, ValueError):
    """A session id matches several sessions (code ``ambiguous_session``); the message names them."""

    def __init__(self, message: str) -> None:
        super().__init__("ambiguous_session", message)


class SessionDeletedError(SessionError, FileNotFoundError):
    """The session was deleted (its file is gone): nothing more can be appended (code ``deleted``)."""

    def __init__(self, message: str) -> None:
        super().__init__("deleted", message)


class StaleSessionError(SessionError):
    """The session file changed under this handle since it was last read or written (code
    ``stale``): appending would attach the entry to an outdated leaf. Reopen the session."""

    def __init__(self, message: str) -> None:
        super().__init__("stale", message)


class SessionLabWarning(UserWarning):
    """Root of sessionlab's warnings."""


class BadLinesWarning(SessionLabWarning):
    """A file had bad lines; emitted once per file with counts by kind."""


class NativeLoaderWarning(SessionLabWarning):
    """The native scanner was not used: it is stale (built from other C sources or rules than the
    package's; emitted once, at import, with the command that rebuilds it), or it failed on files it
    had accepted, which were loaded by the slower paths (once per load).

    In the second case the tables are still right, but this is a bug in the scanner: please report
    it with the file.
    """


class UnrecordedDataWarning(SessionLabWarning):
    """An analysis met sessions whose agent does not record what it needs (Codex writes no cache
    writes, say): the affected column is null there, the other rows are complete. Emitted once per
    call, naming the agents."""


class CacheWarning(SessionLabWarning):
    """Part of the loaders' cache was damaged (a checksum or a field did not match): the files it
    held were read afresh, and the cache is written again. Emitted once per load."""
