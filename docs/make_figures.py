"""Regenerate the figures in docs/ from the sessions in data/ (run from the repository root).

    python docs/make_figures.py
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from sessionlab import FractionPolicy, NeverCompact, PiThresholdPolicy, entries_table, usage_by  # noqa: E402
from sessionlab.plotting import plot_context_timeline, plot_tree, plot_usage  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"
DOCS = ROOT / "docs"
BRANCHY = "ec99108d-db5b-4fab-8f4d-3e27dda1494c"  # data/sessions/--home-user-webapp--/2026-01-12...


def save(ax, name: str) -> None:
    ax.figure.savefig(DOCS / name, dpi=110)
    plt.close(ax.figure)
    print("wrote", DOCS / name)


def main() -> None:
    real = entries_table(DATA / "pi" / "before-compaction.jsonl")
    policies = [PiThresholdPolicy(200_000), FractionPolicy(200_000, 0.5, 20_000), NeverCompact(200_000)]
    save(plot_context_timeline(real, session_id=None, policies=policies), "context_timeline.png")

    everything = entries_table(DATA)
    save(plot_usage(usage_by(everything, by=["day", "model"]), by="day", metric="cost_usd"), "usage_by_day.png")
    save(plot_usage(usage_by(everything, by=["model"]), by="model", metric="tokens"), "usage_by_model.png")

    save(plot_tree(everything, session_id=BRANCHY), "tree.png")
    save(plot_tree(real, session_id=None), "tree_real.png")


if __name__ == "__main__":
    main()
