"""Following a loaded source while agents write to it: what :meth:`Corpus.follow` runs.

A :class:`Follower` waits in a background thread for a change to the source's session files and
then refreshes the corpus (:meth:`Corpus.refresh`: through the cache, unchanged files are not
read again and a grown pi file parses only its new lines), hands the new corpus to a callback and
waits again. It waits with ``watchfiles`` (the ``live`` extra: the operating system's file events,
no work while nothing changes) or, without it, by polling: a stat of the watched files and a
listing of the watched folders every ``interval`` seconds.

What is watched (:func:`watched_paths`): each folder of the source (recursively), each file, the
fixed folder in front of each glob, and for ``source=None`` the agents' default folders that
exist. A change that leaves the corpus as it was (a file touched, a file of another kind) calls
nothing.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from ..errors import ArgumentTypeError, MissingDependencyError, check_option

__all__ = ["Backend", "Follower", "watched_paths", "has_watchfiles", "POLL_INTERVAL"]

Backend = Literal["auto", "watchfiles", "poll"]
POLL_INTERVAL = 0.5
"""Seconds between two looks at the files when polling."""
_DEBOUNCE_MS = 300  # watchfiles: longest time changes are grouped before they are reported
_STEP_MS = 50  # watchfiles: a quiet spell this long ends a group of changes
_READY_MS = 500  # watchfiles: a quiet spell this long reports that nothing changed
_GLOB = "*?["


def has_watchfiles() -> bool:
    """Whether ``watchfiles`` (the ``live`` extra) can be imported."""
    try:
        import watchfiles  # noqa: F401
    except ImportError:
        return False
    return True


def _glob_root(pattern: str) -> Path:
    """The folder in front of a glob's first wildcard (``logs/*/x.jsonl`` -> ``logs``)."""
    fixed: list[str] = []
    for part in Path(pattern).parts:
        if any(ch in part for ch in _GLOB):
            break
        fixed.append(part)
    return Path(*fixed) if fixed else Path(".")


def watched_paths(source: Any, agents: Sequence[str] | None = None) -> list[Path]:
    """The existing folders and files a follow of ``source`` watches (see the module's docstring)."""
    if source is None:
        from .. import agents as registry

        chosen = registry.check_agents(agents)
        roots = registry.default_roots()
        found = [p for name in chosen for p in roots.get(name, [])]
    else:
        items = [source] if isinstance(source, (str, os.PathLike)) else list(source)
        found = []
        for item in items:
            text = os.path.expanduser(os.fspath(item))
            path = Path(text)
            found.append(path if path.exists() or not any(ch in text for ch in _GLOB) else _glob_root(text))
    out: dict[Path, None] = {}
    for p in found:
        if p.exists():
            out.setdefault(p.resolve(), None)
    return list(out)


def _is_session_file(path: str, files: set[str]) -> bool:
    return path.endswith(".jsonl") or path in files


def _snapshot(paths: list[Path]) -> dict[str, tuple[int, int, int]]:
    """(size, mtime, inode) of every watched file and every ``*.jsonl`` below the watched folders."""
    out: dict[str, tuple[int, int, int]] = {}

    def add(p: str) -> None:
        try:
            st = os.stat(p)
        except OSError:
            return
        out[p] = (st.st_size, st.st_mtime_ns, st.st_ino)

    for root in paths:
        if root.is_file():
            add(str(root))
            continue
        for folder, dirs, names in os.walk(root):  # (a listing per folder, per look: the polling fallback)
            dirs.sort()
            for name in names:
                if name.endswith(".jsonl"):
                    add(os.path.join(folder, name))
    return out


class Follower:
    """A corpus kept current by a background thread (:meth:`Corpus.follow` makes one).

    Attributes:
        corpus: The newest corpus (the one it started from until a file changes).
        updates: How many new corpora the follower has made.
        backend: ``"watchfiles"`` or ``"poll"``: how it waits for changes.
        paths: The folders and files it watches.
        error: The last exception a refresh or the callback raised (the follower keeps going), or
            the one that stopped the watch itself (then :attr:`running` is False), or None.

    Use it as a context manager, or call :meth:`stop` when done.

    Example:
        >>> with load("sessions/").follow(print) as f:  # doctest: +SKIP
        ...     f.wait(60)  # a new line in a session file: print(new corpus)
    """

    def __init__(self, corpus: Any, callback: Callable[[Any], object] | None = None, *, paths: list[Path],
                 backend: Backend = "auto", interval: float = POLL_INTERVAL) -> None:
        check_option("backend", backend, ("auto", "watchfiles", "poll"))
        if not isinstance(interval, (int, float)) or isinstance(interval, bool) or interval <= 0:
            raise ArgumentTypeError("interval", f"interval must be a number of seconds above 0, not {interval!r}")
        if backend == "watchfiles" and not has_watchfiles():
            raise MissingDependencyError('following files with watchfiles needs it: pip install "sessionlab[live]"')
        self.backend = "watchfiles" if backend != "poll" and has_watchfiles() else "poll"
        self.paths = paths
        self.interval = float(interval)
        self.updates = 0
        self.error: BaseException | None = None
        self._corpus = corpus
        self._callback = callback
        self._stop = threading.Event()
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="sessionlab-follow", daemon=True)
        self._thread.start()

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"Follower({state}, {self.backend}, {len(self.paths)} paths, {self.updates} updates)"

    @property
    def corpus(self) -> Any:
        with self._cond:
            return self._corpus

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def wait(self, timeout: float | None = None, *, since: int | None = None) -> bool:
        """Block until a new corpus comes (True), ``timeout`` seconds pass or the follower stops
        (False). ``since``: an earlier :attr:`updates` count; a corpus made after it counts
        (default: the count now)."""
        with self._cond:
            seen = self.updates if since is None else since
            self._cond.wait_for(lambda: self.updates > seen or self._stop.is_set(), timeout)
            return self.updates > seen

    def stop(self, timeout: float | None = 5.0) -> None:
        """Stop watching (the thread ends within a fraction of a second)."""
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def __enter__(self) -> Follower:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- the thread --------------------------------------------------------------------------
    def _run(self) -> None:
        # each generator yields once when its watch is set up (what changed between the load and
        # then is read at that point), then once per change
        try:
            for _ in self._watchfiles() if self.backend == "watchfiles" else self._poll():
                self._update()
        except Exception as e:  # the watch itself failed (a folder gone...): the follower stops, saying why
            self.error = e
        finally:
            self._stop.set()
            with self._cond:
                self._cond.notify_all()

    def _update(self) -> None:
        try:
            new = self._corpus.refresh()
            if new.changes is not None and not new.changes.changed:
                return
            with self._cond:
                self._corpus = new
            if self._callback is not None:
                self._callback(new)
        except Exception as e:  # kept for the caller; a failed refresh waits for the next change
            self.error = e
            return
        with self._cond:
            self.updates += 1
            self._cond.notify_all()

    def _watchfiles(self) -> Any:
        import watchfiles

        files = {str(p) for p in self.paths if p.is_file()}
        if not self.paths:
            self._stop.wait()
            return
        ready = False
        # (yield_on_timeout: the first quiet spell says the watch is set up; later ones are skipped)
        for found in watchfiles.watch(*self.paths, watch_filter=lambda _c, p: _is_session_file(p, files),
                                      debounce=_DEBOUNCE_MS, step=_STEP_MS, stop_event=self._stop,
                                      rust_timeout=_READY_MS, yield_on_timeout=True, raise_interrupt=False,
                                      ignore_permission_denied=True):
            if self._stop.is_set():
                return
            if found or not ready:
                ready = True
                yield found

    def _poll(self) -> Any:
        before = _snapshot(self.paths)
        yield before
        while not self._stop.wait(self.interval):
            now = _snapshot(self.paths)
            if now != before:
                before = now
                yield now

