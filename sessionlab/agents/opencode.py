"""OpenCode sessions: its SQLite database (``~/.local/share/opencode/opencode.db``) and the JSON
storage of older releases (``storage/message/<session>/``).

A session is not a file here: the database holds every session, the old storage a folder of files
per session. :func:`files` lists one source per session, ``<database>#<session id>`` or the
session's ``storage/message/<session id>`` folder (one the database does not hold: the migration to
the database left the old copies in place), and the reader
(:func:`sessionlab.agents._opencode_reader.read_opencode`) opens it itself (``opens``). Every
assistant message with usage is a call, its recorded ``cost`` kept when above zero, else priced.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ._spec import AgentSpec, home_path, split_member

__all__ = ["SPEC", "roots", "files", "database", "split_source"]

_CHANNEL_DB = re.compile(r"opencode-[A-Za-z0-9_-]+\.db")


def roots() -> list[Path]:
    """Each folder of ``$OPENCODE_DATA_DIR`` (comma-separated), else ``$XDG_DATA_HOME/opencode``
    (``~/.local/share/opencode``), OpenCode's data folder."""
    env = os.environ.get("OPENCODE_DATA_DIR")
    if env is not None:
        return [home_path(p) for p in env.split(",") if p.strip()]
    xdg = os.environ.get("XDG_DATA_HOME", "").strip()
    return [(home_path(xdg) if xdg else Path.home() / ".local" / "share") / "opencode"]


def database(folder: Path) -> Path | None:
    """The folder's ``opencode.db``, else its first ``opencode-<channel>.db`` (a release channel's)."""
    db = folder / "opencode.db"
    if db.is_file():
        return db
    try:
        names = sorted(n for n in os.listdir(folder) if _CHANNEL_DB.fullmatch(n))
    except OSError:
        return None
    return next((folder / n for n in names if (folder / n).is_file()), None)


def split_source(path: str) -> tuple[str, str] | None:
    """``(database, session id)`` of a ``<database>#<session id>`` source, else None."""
    db, sid = split_member(path)
    if sid is None or "/" in sid or os.sep in sid:
        return None
    name = os.path.basename(db)
    return (db, sid) if name == "opencode.db" or _CHANNEL_DB.fullmatch(name) else None


_MESSAGE = f"{os.sep}message{os.sep}"


def _is_storage_session(path: str) -> bool:
    if _MESSAGE not in path:
        return False  # (most paths: no path arithmetic)
    parent = os.path.dirname(path.rstrip("/" + os.sep))
    return (os.path.basename(parent) == "message" and os.path.basename(os.path.dirname(parent)) == "storage"
            and os.path.isdir(path))


def _opens(path: str) -> bool:
    return ("#" in path and split_source(path) is not None) or _is_storage_session(path)


def files(folders: list[Path], errors: list[tuple[str, str]] | None = None) -> list[str]:
    """One source per session: the database's sessions (those with messages), then the old
    storage's session folders the database does not hold."""
    from ._opencode_reader import database_sessions

    out: list[str] = []
    for folder in folders:
        held: set[str] = set()
        db = database(folder)
        if db is not None:
            try:
                held = set(database_sessions(str(db)))
            except Exception as exc:  # (sqlite3.Error: a damaged or locked database)
                if errors is not None:
                    errors.append((str(db), f"{type(exc).__name__}: {exc}"))
            out += [f"{db}#{sid}" for sid in sorted(held)]
        storage = folder / "storage" / "message"
        try:
            names = sorted(os.listdir(storage)) if storage.is_dir() else []
        except OSError as exc:
            names = []
            if errors is not None:
                errors.append((str(storage), f"{type(exc).__name__}: {exc.strerror or exc}"))
        out += [str(storage / n) for n in names if n not in held and (storage / n).is_dir()]
    return out


SPEC = AgentSpec(
    name="opencode", title="OpenCode", recognise=lambda obj: False, roots=roots,
    env=("OPENCODE_DATA_DIR", "XDG_DATA_HOME"), files=files, opens=_opens,
    reader="sessionlab.agents._opencode_reader:read_opencode",
    members="sessionlab.agents._opencode_reader:read_members",
    spend_members="sessionlab.agents._opencode_reader:spend_members", calls_need_usage=True, priced=True,
    folder_doc="`$OPENCODE_DATA_DIR` (comma-separated), else `$XDG_DATA_HOME/opencode` "
               "(`~/.local/share/opencode`): `opencode.db` (SQLite, one source per session, "
               "`opencode.db#<session id>`) and the older `storage/message/<session id>/` folders",
)
