"""CompactionLab: simulate_compaction of one session under policies set with sliders."""

from __future__ import annotations

from typing import Any

import ipywidgets as W
import pyarrow as pa

from ..compaction import SimulationResult
from ..tables.corpus import SessionIds
from ._common import arrow_html, as_table, esc, first_session, session_options, session_table, show_figure

__all__ = ["CompactionLab"]

SUMMARY_COLUMNS = ["policy", "compactions", "recorded_compactions", "peak_context_tokens", "prompt_tokens",
                   "summarized_tokens", "overflow_calls", "cost_usd", "recorded_cost_usd"]


def _slider(cls: type, description: str, value: float, lo: float, hi: float, step: float) -> Any:
    return cls(value=value, min=lo, max=hi, step=step, description=description, continuous_update=False,
               style={"description_width": "initial"}, layout=W.Layout(width="48%"))


class CompactionLab(W.VBox):
    """Replay one session's current branch under three policies and compare them.

    The policies, all with the sliders' window, keep-recent tokens and summary size: never compact
    (overflowing calls counted against the window), pi's threshold (``window - reserve``) and a
    fraction of the window. Every change re-runs :func:`~sessionlab.simulate_compaction` and redraws
    :func:`sessionlab.plotting.plot_context_timeline`.

    Attributes:
        session: Dropdown of sessions.
        window, reserve, keep_recent, summary_tokens: IntSliders (tokens).
        fraction: FloatSlider, the trigger fraction of the fraction policy.
        plot: Output with the timeline; summary: HTML, one row per policy.
        policies: the policies of the last run; result: its :class:`~sessionlab.SimulationResult`.

    Example:
        >>> lab = CompactionLab(load("data/"))  # doctest: +SKIP
        >>> lab.window.value = 100_000  # doctest: +SKIP
    """

    def __init__(self, entries, *, session_id: SessionIds = None, context_window: int = 200_000,
                 **kwargs: Any) -> None:
        self.entries: pa.Table = as_table(entries)
        options = session_options(self.entries, session_id)
        self.session = W.Dropdown(options=options, description="Session", layout=W.Layout(width="90%"))
        self.window = _slider(W.IntSlider, "context window", context_window, 4_000, 1_000_000, 1_000)
        self.reserve = _slider(W.IntSlider, "reserve (pi)", 16_384, 0, 131_072, 1_024)
        self.fraction = _slider(W.FloatSlider, "trigger fraction", 0.8, 0.3, 1.0, 0.05)
        self.keep_recent = _slider(W.IntSlider, "keep recent tokens", 20_000, 0, 200_000, 1_000)
        self.summary_tokens = _slider(W.IntSlider, "summary tokens", 2_000, 0, 20_000, 500)
        self.plot = W.Output()
        self.summary = W.HTML()
        self.policies: list[Any] = []
        self.result: SimulationResult | None = None
        self._rows: pa.Table | None = None
        if options:
            self.session.value = first_session(session_id) or options[0][1]
        super().__init__(children=[self.session, W.HBox([self.window, self.reserve]),
                                   W.HBox([self.fraction, self.keep_recent]), self.summary_tokens,
                                   self.plot, self.summary], **kwargs)
        for w in (self.session, self.window, self.reserve, self.fraction, self.keep_recent, self.summary_tokens):
            w.observe(self._refresh, names="value")
        self._refresh()

    def make_policies(self) -> list[Any]:
        """The policies the sliders describe, in the order of the summary's rows."""
        from .. import FractionPolicy, NeverCompact, PiThresholdPolicy, SummarySize

        window, keep = self.window.value, self.keep_recent.value
        summary = SummarySize(tokens=self.summary_tokens.value)
        return [
            NeverCompact(window, summary=summary),
            PiThresholdPolicy(window, reserve_tokens=self.reserve.value, keep_recent_tokens=keep, summary=summary),
            FractionPolicy(window, trigger_fraction=self.fraction.value, keep_recent_tokens=keep, summary=summary),
        ]

    def _refresh(self, change: Any = None) -> None:
        from .. import simulate_compaction

        sid = self.session.value
        if sid is None:
            self.summary.value = ""
            return
        self._rows = rows = session_table(self.entries, sid)
        self.policies = self.make_policies()
        self.result = res = simulate_compaction(rows, self.policies, branch="current")
        shown = res.sessions.select(SUMMARY_COLUMNS)
        self.summary.value = (f"<b>{esc(sid)}</b>: {res.sessions['calls'][0].as_py() if res.sessions.num_rows else 0}"
                              f" calls on the current branch" + arrow_html(shown))
        show_figure(self.plot, self._draw, figsize=(10, 4))

    def _draw(self, ax: Any) -> None:
        from ..plotting import plot_context_timeline

        plot_context_timeline(self._rows, session_id=self.session.value, policies=self.policies, ax=ax)
