"""Errors and warnings of sessionlab.

Every exception sessionlab raises derives from :class:`SessionLabError` and also from the
matching builtin, so ``except KeyError`` or ``except ValueError`` keeps working::

    SessionLabError (Exception)
    ├── BadInputError (ValueError)        a session file broke a rule and on_bad_lines="raise"
    ├── UnsafePathError (ValueError)      a repo path or session id would leave the repo root
    ├── OptionError (ValueError)          an option has a value it does not take (``rules=``...)
    │   └── RulesMismatchError            a table built under one pi release's rules, asked for another's
    ├── ReadOnlyFormatError (ValueError)  a write to a format sessionlab only reads (pi's v4 files)
    └── SessionError                      a session operation failed; ``code`` says which
        ├── EntryNotFoundError (KeyError)     code "not_found"
        ├── InvalidForkTargetError (ValueError) code "invalid_fork_target"
        └── CycleError (ValueError)           code "cycle": a parent chain loops

    SessionLabWarning (UserWarning)
    ├── BadLinesWarning                   one per file read with on_bad_lines="warn"
    └── NativeLoaderWarning               the C scanner failed on files it had accepted (a bug)
"""

from __future__ import annotations

__all__ = [
    "SessionLabError",
    "BadInputError",
    "UnsafePathError",
    "OptionError",
    "RulesMismatchError",
    "ReadOnlyFormatError",
    "SessionError",
    "EntryNotFoundError",
    "InvalidForkTargetError",
    "CycleError",
    "SessionLabWarning",
    "BadLinesWarning",
    "NativeLoaderWarning",
]


class SessionLabError(Exception):
    """Root of every sessionlab error."""


class BadInputError(SessionLabError, ValueError):
    """A session file has a problem and the reader was asked to raise.

    ``issues`` holds the :class:`~sessionlab.io.LineIssue` records found so far.
    """

    def __init__(self, message: str, issues: list | None = None) -> None:
        super().__init__(message)
        self.issues = list(issues or [])


class UnsafePathError(SessionLabError, ValueError):
    """A session id or path would escape the repository root."""


class OptionError(SessionLabError, ValueError):
    """An option was given a value it does not take; the message lists the ones it does."""


class RulesMismatchError(OptionError):
    """A table was built under one pi release's rules and a function was asked for another's:
    per-entry estimates differ between releases, so mixing them would give wrong numbers."""
class ReadOnlyFormatError(SessionLabError, ValueError):
    """A write was asked of a session in a format sessionlab reads but does not write (pi's v4)."""


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


class SessionLabWarning(UserWarning):
    """Root of sessionlab's warnings."""


class BadLinesWarning(SessionLabWarning):
    """A file had bad lines; emitted once per file with counts by kind."""


class NativeLoaderWarning(SessionLabWarning):
    """The native scanner failed on files it had accepted; they were loaded by the slower paths.

    Emitted once per load. The tables are still right, but this is a bug in the scanner: please
    report it with the file.
    """
