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


LAYERS = [  # (layer, its folders, what it is), top to bottom: imports point down only
    ("face", "cli/  report/  widgets/  plotting/  dask  synth/", "terminal, HTML, notebook and cluster faces"),
    ("analysis", "analysis/  compaction/  tree", "vectorised answers over the tables"),
    ("tables", "tables/ (load, cache, forest, _facts, _schema)", "one scan -> Arrow tables; the one owner of facts"),
    ("agents", "agents/ (pi, claude_code, codex + registry)", "one module per agent: recognise, folders, read"),
    ("pi", "pi/ (model, io, context, tokens, storage, session, repo)", "the seed's session system, exact"),
    ("base", "errors  _arrow  _jsjson  _time  pricing  _scan.c", "no imports from above"),
]


def architecture() -> None:
    """docs/img/architecture.png: the layers of the package, top to bottom."""
    fig, ax = plt.subplots(figsize=(9, 4.2))
    ax.set_axis_off()
    colours = ["#fde2c8", "#fbe9b7", "#d9ecd0", "#d3e4f5", "#e3dcf2", "#e6e6e6"]
    n = len(LAYERS)
    for i, ((name, folders, what), colour) in enumerate(zip(LAYERS, colours)):
        y = n - 1 - i
        ax.add_patch(plt.Rectangle((0, y + 0.08), 10, 0.84, facecolor=colour, edgecolor="#555555", linewidth=0.8))
        ax.text(0.15, y + 0.5, name, fontsize=11, fontweight="bold", va="center")
        ax.text(1.55, y + 0.62, folders, fontsize=9, family="monospace", va="center")
        ax.text(1.55, y + 0.3, what, fontsize=8.5, color="#333333", va="center")
    ax.annotate("", xy=(9.6, 0.2), xytext=(9.6, n - 0.2), arrowprops=dict(arrowstyle="->", color="#555555"))
    ax.text(9.45, n / 2, "imports", rotation=90, ha="right", va="center", fontsize=8.5, color="#555555")
    ax.set_xlim(0, 10)
    ax.set_ylim(0, n)
    fig.tight_layout()
    (DOCS / "img").mkdir(exist_ok=True)
    fig.savefig(DOCS / "img" / "architecture.png", dpi=110)
    plt.close(fig)
    print("wrote", DOCS / "img" / "architecture.png")


def main() -> None:
    architecture()
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
