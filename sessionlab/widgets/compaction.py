"""CompactionLab: simulate_compaction of one session under policies set with sliders."""

from __future__ import annotations

from typing import Any

import ipywidgets as W
import pyarrow as pa

from ..compaction import SimulationResult
from ..tables.corpus import SessionIds
from ._common import (
    StaticFallback,
    arrow_html,
    as_table,
    esc,
    first_session,
    note,
    session_table,
    show_figure,
    style_widget,
)
from ._picker import SessionSearch, picker_options

__all__ = ["CompactionLab"]

SUMMARY_COLUMNS = ["policy", "compactions", "recorded_compactions", "peak_context_tokens", "prompt_tokens",
                   "summarized_tokens", "overflow_calls", "cost_usd", "summary_calls_cost_usd", "recorded_cost_usd"]
# soft hyphens (U+00AD) let long header words break cleanly when the notebook is narrow
SUMMARY_HEADERS = ["policy", "compac\u00adtions", "recorded compac\u00adtions", "peak context (tokens)",
                   "prompt tokens", "summa\u00adrized tokens", "overflow calls", "cost", "summary calls",
                   "recorded cost"]
# context windows of current models, the slider's stops (a custom window is added in order)
WINDOWS = (8_000, 16_000, 32_000, 64_000, 100_000, 128_000, 160_000, 200_000, 256_000, 400_000, 1_000_000)


def _tokens(n: int) -> str:
    return f"{n:,}"


def _slider(cls: type, description: str, value: float, lo: float, hi: float, step: float, **kw: Any) -> Any:
    return cls(value=value, min=lo, max=hi, step=step, description=description, continuous_update=False,
               style={"description_width": "10em"}, layout=W.Layout(width="auto", min_width="0"), **kw)


def _usd(x: float) -> str:
    return f"&#36;{x:,.2f}" if x >= 0.005 or x == 0 else "&lt;&#36;0.01"


def cost_note(rows: list[dict[str, Any]]) -> str:
    """Why the simulated and recorded costs differ, from the first policy's row (never compact)."""
    if not rows or not rows[0].get("calls"):
        return ""
    r = rows[0]
    cost, rec, n_rec = r["cost_usd"], r["recorded_cost_usd"], r["recorded_compactions"]
    text = (f"<b>cost</b> ({_usd(cost)} never compacting) is the replayed calls' tokens at per-model prices fitted "
            f"to the recorded costs of every session (<code>fit_prices</code>); <b>recorded cost</b> "
            f"({_usd(rec)}) is what the session's files say its calls cost. ")
    if n_rec:
        text += (f"The session compacted {n_rec:,} time{'s' if n_rec != 1 else ''} itself: its calls after a "
                 "compaction sent a smaller context, and its own summary calls are in neither column; the "
                 "policies' summary calls are in <b>summary calls</b>.")
    else:
        text += ("The session never compacted, so never compacting replays the same tokens: the difference is "
                 "the prices alone (fitted vs recorded). A policy that compacts adds "
                 "its summary calls in <b>summary calls</b>.")
    return note(text)


class CompactionLab(StaticFallback, W.VBox):
    """Replay one session's current branch under three policies and compare them.

    The policies, all with the sliders' window, keep-recent tokens and summary size: never compact
    (overflowing calls counted against the window), pi's threshold (``window - reserve``) and a
    fraction of the window. Every change runs :func:`~sessionlab.simulate_compaction` once, on the
    whole table with ``session_id=`` (so its prices and costs are the ones
    ``simulate_compaction(corpus, ..., session_id=sid)`` gives), and hands that result to
    :func:`sessionlab.plotting.plot_context_timeline`.

    Attributes:
        session: Dropdown of sessions (name or first prompt · day · folder · id prefix).
        window: SelectionSlider of common context windows (tokens; ``context_window`` is added).
        reserve, keep_recent, summary_tokens: IntSliders (tokens, thousands separators); their
            maxima follow the window (a reserve or kept tail as large as the window is no policy),
            so a smaller window pulls them down, and ``notes`` says so.
        fraction: FloatSlider, the trigger fraction of the fraction policy.
        search: a search box that narrows ``session`` (every typed word in the label or id);
            sessions are listed newest first, a subagent session under its parent, marked
            ``↳ subagent``.
        plot: Output with the timeline (in a narrow cell it scrolls sideways instead of shrinking
            its text); summary: HTML, one row per policy (right-aligned numbers, dollars: the calls'
            cost at fitted prices, the simulated summary calls' cost, the recorded cost); costs:
            HTML, what the difference between simulated and recorded cost is made of; notes: HTML,
            what was clamped or why nothing is shown.
        policies: the policies of the last run; result: its :class:`~sessionlab.SimulationResult`.

    Example:
        >>> lab = CompactionLab(load("data/"))  # doctest: +SKIP
        >>> lab.window.value = 100_000  # doctest: +SKIP
    """

    def __init__(self, entries, *, session_id: SessionIds = None, context_window: int = 200_000,
                 **kwargs: Any) -> None:
        self.entries: pa.Table = as_table(entries)
        options = picker_options(self.entries, session_id)
        self.session = W.Dropdown(options=options, description="Session", layout=W.Layout(width="auto"))
        self.search = SessionSearch(self.session, options)
        self.costs = W.HTML(layout=W.Layout(width="auto", min_width="0"))
        windows = sorted({*WINDOWS, int(context_window)})
        self.window = W.SelectionSlider(options=[(_tokens(w), w) for w in windows], value=int(context_window),
                                        description="context window", continuous_update=False,
                                        style={"description_width": "10em"},
                                        layout=W.Layout(width="auto", min_width="0"))
        self.reserve = _slider(W.IntSlider, "reserve (pi)", 16_384, 0, 131_072, 1_024, readout_format=",d")
        self.fraction = _slider(W.FloatSlider, "trigger fraction", 0.8, 0.3, 1.0, 0.05, readout_format=".0%")
        self.keep_recent = _slider(W.IntSlider, "keep recent tokens", 20_000, 0, 200_000, 1_000, readout_format=",d")
        self.summary_tokens = _slider(W.IntSlider, "summary tokens", 2_000, 0, 20_000, 250, readout_format=",d")
        # a narrow cell scrolls the plot sideways rather than shrinking its text (see STYLE)
        self.plot = W.Output(layout=W.Layout(width="auto", min_width="0", overflow="auto hidden"))
        self.summary = W.HTML(layout=W.Layout(width="auto", min_width="0"))
        self.notes = W.HTML(layout=W.Layout(width="auto", min_width="0"))
        self.policies: list[Any] = []
        self.result: SimulationResult | None = None
        self._rows: pa.Table | None = None
        self._clamped: list[str] = []
        # what the user asked for on each token slider: a smaller window holds a slider lower, a
        # larger one gives the asked value back
        self._wanted = {"reserve": self.reserve.value, "keep_recent": self.keep_recent.value,
                        "summary_tokens": self.summary_tokens.value}
        if options:
            self.session.value = first_session(session_id) or options[0][1]
        self._fit_to_window()
        grid = W.GridBox([self.window, self.reserve, self.fraction, self.keep_recent, self.summary_tokens],
                         layout=W.Layout(grid_template_columns="repeat(auto-fit, minmax(380px, 1fr))",
                                         width="auto", min_width="0"))
        kwargs.setdefault("layout", W.Layout(width="auto", max_width="100%", min_width="0"))
        super().__init__(children=[style_widget(), self.search, self.session, grid, self.notes, self.plot, self.summary,
                                   self.costs], **kwargs)
        self.add_class("sessionlab-compaction-lab")
        self.add_class("sessionlab-root")
        for name in ("session", "window", "reserve", "fraction", "keep_recent", "summary_tokens", "plot", "summary",
                     "notes", "search", "costs"):
            getattr(self, name).add_class(f"sessionlab-{name.replace('_', '-')}")  # for styling and tests
        self.window.observe(self._on_window, names="value")
        self.session.observe(self._on_session, names="value")
        self.fraction.observe(self._refresh, names="value")
        for w in (self.reserve, self.keep_recent, self.summary_tokens):
            w.observe(self._on_token_slider, names="value")
        self._refresh()

    _CAPS = (("reserve", 131_072, 2, "reserve"), ("keep_recent", 200_000, 2, "keep recent tokens"),
             ("summary_tokens", 20_000, 4, "summary tokens"))  # (slider, largest, window share, name)

    def _fit_to_window(self) -> None:
        """The token sliders' maxima follow the window: at most half of it reserved or kept, a
        quarter summarized. A value asked for above that is held at the bound (and noted) until a
        larger window lets it back."""
        window = self.window.value
        self._clamped = []
        for name, largest, share, what in self._CAPS:
            slider = getattr(self, name)
            top = min(largest, window // share)
            top = max(top - top % slider.step, slider.step)
            wanted = self._wanted[name]
            slider.max = max(top, slider.value)  # first room for the value, then the bound
            slider.value = min(wanted, top)
            slider.max = top
            if wanted > top:
                self._clamped.append(f"{what} {wanted:,} → {top:,}")

    def _on_session(self, change: Any) -> None:
        if not self.search.busy:  # (the search box puts the picked session back: nothing changed)
            self._refresh()

    def _on_token_slider(self, change: Any) -> None:
        name = next(n for n, *_ in self._CAPS if getattr(self, n) is change["owner"])
        self._wanted[name] = change["new"]
        self._clamped = [c for c in self._clamped if not c.startswith(dict((n, w) for n, _, _, w in self._CAPS)[name])]
        self._refresh()

    def _on_window(self, change: Any) -> None:
        sliders = (self.reserve, self.keep_recent, self.summary_tokens)
        for w in sliders:  # one refresh for the window and whatever it moves
            w.unobserve(self._on_token_slider, names="value")
        try:
            self._fit_to_window()
        finally:
            for w in sliders:
                w.observe(self._on_token_slider, names="value")
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
            self.notes.value = note("No sessions: the entries table is empty.")
            return
        window = self.window.value
        self.notes.value = note(
            f"In a {window:,}-token window, at most half can be reserved or kept and a quarter summarized: "
            + "; ".join(esc(c) for c in self._clamped), kind="warn") if self._clamped else ""
        self._rows = session_table(self.entries, sid)
        self.policies = self.make_policies()
        # one simulation per change, on the whole table (prices fitted on every session, as
        # simulate_compaction(corpus, ..., session_id=sid) does); the plot draws this result
        self.result = res = simulate_compaction(self.entries, self.policies, session_id=sid, branch="current")
        calls = res.sessions["calls"][0].as_py() if res.sessions.num_rows else 0
        shown = res.sessions.select(SUMMARY_COLUMNS)
        label = self.session.label or sid
        self.summary.value = (f"<b>{esc(label)}</b> <small><code>{esc(sid)}</code></small>: {calls:,} "
                              f"{'call' if calls == 1 else 'calls'} on the current branch"
                              + arrow_html(shown, headers=SUMMARY_HEADERS))
        self.costs.value = cost_note(res.sessions.to_pylist())
        show_figure(self.plot, self._draw, figsize=(9.2, 4))

    def _draw(self, ax: Any) -> str | None:
        from ..plotting import plot_context_timeline

        label = self.session.label or self.session.value
        if self.result is not None and not (self.result.sessions["calls"].to_pylist() or [0])[0]:
            return (f"Nothing to plot: the current branch of {label} has no assistant call "
                    "(no recorded usage to replay).")
        from ..tables.labels import session_labels

        lab = session_labels(self._rows).get(self.session.value)
        title = f"{lab.title} · {lab.day}" if lab and lab.day else label
        plot_context_timeline(self._rows, session_id=self.session.value, simulation=self.result, ax=ax, title=title)
        return None
