"""The widgets' live mode: while it is on, a change to the session files redraws the widget.

:class:`Live` holds a widget's corpus and, while on, a :class:`~sessionlab.tables.Follower` of it
(:meth:`~sessionlab.Corpus.follow`): each new corpus (through the cache: only what changed is read)
goes to the widget's ``show(corpus)``. That runs in the follower's thread; the trait values it
sets reach the browser through the kernel's comm like any other change. Nothing runs while the
files do not change. A widget made from an entries table (not a corpus from ``load()``) has no
source to follow: its toggle is disabled.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import ipywidgets as W

from ..tables.corpus import Corpus

__all__ = ["Live", "live_button"]


class Live:
    """A widget's corpus and, while :attr:`on`, the follower that keeps it current.

    Attributes:
        corpus: The newest corpus shown (None when the widget was made from a table).
        follower: The running :class:`~sessionlab.tables.Follower`, or None.
        updates: How many new corpora were shown.
        error: The last error of a redraw, or None; each is also handed to the ``on_error`` hooks.
    """

    def __init__(self, corpus: Corpus | None, show: Callable[[Corpus], object], *, backend: str = "auto") -> None:
        self.corpus = corpus
        self.follower: Any = None
        self.updates = 0
        self.error: BaseException | None = None
        self.on_error: list[Callable[[BaseException], object]] = []
        self._show = show
        self._backend = backend
        self._lock = threading.Lock()

    @property
    def available(self) -> bool:
        return self.corpus is not None

    @property
    def on(self) -> bool:
        return self.follower is not None

    def start(self) -> None:
        """Follow the corpus's files (nothing happens without a corpus, or when already on)."""
        if self.corpus is None or self.follower is not None:
            return
        self.follower = self.corpus.follow(self._apply, backend=self._backend)  # type: ignore[arg-type]

    def stop(self) -> None:
        follower, self.follower = self.follower, None
        if follower is not None:
            follower.stop()

    def set(self, on: bool) -> None:
        self.start() if on else self.stop()

    def _apply(self, corpus: Corpus) -> None:
        with self._lock:  # one redraw at a time
            self.corpus = corpus
            try:
                self._show(corpus)
            except Exception as e:  # the follower's thread has nowhere to report it: the toggle shows it
                self.error = e
                for hook in self.on_error:
                    hook(e)
                raise
            self.updates += 1


def live_button(live: Live) -> W.ToggleButton:
    """A "Live" ToggleButton that turns ``live`` on and off (disabled without a corpus)."""
    button = W.ToggleButton(value=False, description="Live", icon="circle", disabled=not live.available,
                            tooltip="redraw when the session files change" if live.available
                            else "only a corpus from load() can follow its files")
    button.observe(lambda change: live.set(change["new"]), names="value")
    button.add_class("sessionlab-live")

    def failed(error: BaseException) -> None:
        button.button_style = "danger"
        button.tooltip = f"the last redraw failed: {type(error).__name__}: {error}"

    live.on_error.append(failed)
    return button
