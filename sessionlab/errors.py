"""Errors and warnings of sessionlab.

Every exception sessionlab raises derives from :class:`SessionLabError` and also from the
matching builtin, so ``except KeyError`` or ``except ValueError`` keeps working::

    SessionLabError (Exception)
    ├── BadInputError (ValueError)        a session file broke a rule and on_bad_lines="raise"
    ├── UnsafePathError (ValueError)      a repo path or session id would leave the repo root
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
