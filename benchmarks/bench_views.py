"""The browser faces: SessionTree drawing a ~20,000-entry session, and the HTML report of 1,000 sessions.

One command, from the repository root (needs the ``browser`` extra and Chromium at /usr/bin/chromium):

    python benchmarks/bench_views.py                     # generates the data with sessionlab.synth
    python benchmarks/bench_views.py --turns 2100 --sessions 1000 --repeat 5

SessionTree, on the same session in one run: building the widget's state in Python
(``tree_payload``: the ``tree_layout`` arrays as JSON lists) and its size; the browser's first
full draw, a redraw after "fit" and a zoomed frame (the canvas code of the widget, loaded into a
blank page with a stand-in for the widget model; milliseconds measured in the page with
``performance.now()``); beside them the static ``plot_tree`` drawn to a PNG with matplotlib.

Report: ``write_report`` of ``--sessions`` generated sessions (time, file size, size of its JSON
state), then Chromium opening the file: time to ``DOMContentLoaded`` and to the first frame painted
after the script (usage chart, filters, sortable list, the first page of session sections), a
search for one session's id until the frame that shows it, and the time to draw one session's
charts on navigation. Each browser figure is the median of ``--repeat`` fresh pages.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

# every load here is a cold one: the loaders' cache (on by default) would serve repeated runs
os.environ["SESSIONLAB_CACHE_DIR"] = ""

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench_tree_layout import _machine  # noqa: E402

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]

PAGE = """<!DOCTYPE html><html><body><div id="root" style="width:960px"></div></body></html>"""

DRIVER = """async ([js, state]) => {
  const listeners = {};
  const model = {
    data: state,
    get(k) { return this.data[k]; },
    set(k, v) { this.data[k] = v; },
    save_changes() {},
    on(ev, f) { (listeners[ev] = listeners[ev] || []).push(f); },
  };
  const url = URL.createObjectURL(new Blob([js], {type: "text/javascript"}));
  const mod = await import(url);
  const t0 = performance.now();
  mod.default.render({model, el: document.getElementById("root")});
  const total = performance.now() - t0;
  const root = document.querySelector(".sessionlab-session-tree");
  return {render: total, first: Number(root.dataset.firstDrawMs)};
}"""


def _median(xs: list[float]) -> float:
    return statistics.median(xs)


def bench_tree(browser, path: Path, repeat: int) -> list[tuple[str, str]]:
    import sessionlab as sl
    from sessionlab.plotting import plot_tree
    from sessionlab.widgets.tree import _JS, tree_payload

    t = sl.entries_table(path)
    t0 = time.perf_counter()
    payload = tree_payload(t, None)
    build = time.perf_counter() - t0
    state = json.dumps(payload)
    js = _JS.read_text()
    first, fit, zoom, total = [], [], [], []
    for _ in range(repeat):  # a fresh page each time: no warm caches in the page
        page = browser.new_page(viewport={"width": 1000, "height": 800})
        page.set_content(PAGE)
        r = page.evaluate(DRIVER, [js, {"tree": payload, "title": "bench", "height": 420, "selected_id": None,
                                        "empty_message": ""}])
        first.append(r["first"])
        total.append(r["render"])
        page.click(".sessionlab-tree-fit")
        fit.append(float(page.get_attribute(".sessionlab-session-tree", "data-draw-ms")))
        box = page.locator("canvas").bounding_box()
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.mouse.wheel(0, -800)
        page.wait_for_timeout(100)
        zoom.append(float(page.get_attribute(".sessionlab-session-tree", "data-draw-ms")))
        page.close()
    import matplotlib

    matplotlib.use("Agg")
    import io

    import matplotlib.pyplot as plt

    t0 = time.perf_counter()
    ax = plot_tree(t)  # options are keyword-only
    ax.figure.savefig(io.BytesIO(), format="png", dpi=100)
    mpl = time.perf_counter() - t0
    plt.close("all")
    n = payload["n"]
    draw = _median(first)
    return [
        ("entries drawn", f"{n:,}"),
        ("widget state (JSON)", f"{len(state) / 1e6:.2f} MB"),
        ("state built in Python (`tree_payload`)", f"{build:.2f} s"),
        ("browser: first full draw", f"{draw:.0f} ms"),
        ("browser: render() incl. parsing arrays and hit-test index", f"{_median(total):.0f} ms"),
        ("browser: redraw after 'fit'", f"{_median(fit):.0f} ms"),
        ("browser: zoomed frame", f"{_median(zoom):.0f} ms"),
        ("matplotlib `plot_tree` to PNG (for comparison)", f"{mpl * 1000:.0f} ms ({mpl * 1000 / draw:.0f}x the draw)"),
    ]


def bench_report(browser, corpus: Path, repeat: int) -> list[tuple[str, str]]:
    import re

    from sessionlab.report import write_report

    out = corpus.parent / "report.html"
    t0 = time.perf_counter()
    write_report(corpus, out)
    build = time.perf_counter() - t0
    text = out.read_text(encoding="utf-8")
    state = re.search(r'id="sessionlab-data">(.*?)</script>', text, re.S).group(1)
    n = text.count("<tr data-i=")
    sid = json.loads(state)["find"][n // 2][0]
    dcl, ready, section, search = [], [], [], []
    for _ in range(repeat):  # a fresh page each time
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        page.goto(out.as_uri(), wait_until="load")
        page.wait_for_selector("body[data-painted-ms]", state="attached")
        ready.append(page.evaluate("Number(document.body.dataset.paintedMs)"))
        dcl.append(page.evaluate("performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd"))
        search.append(page.evaluate(_SEARCH, sid))
        page.evaluate("document.getElementById('f-clear').click()")
        t1 = time.perf_counter()
        page.evaluate(f"location.hash = '#s-{n // 2}'")
        page.wait_for_selector(f"#s-{n // 2} .tree svg")
        section.append((time.perf_counter() - t1) * 1000)
        page.close()
    return [
        ("sessions", f"{n:,}"),
        ("`write_report` (load, layouts, HTML)", f"{build:.1f} s"),
        ("file size", f"{len(text.encode()) / 1e6:.1f} MB"),
        ("of which JSON state (per-session timelines, trees and cards)", f"{len(state.encode()) / 1e6:.1f} MB"),
        ("browser: DOMContentLoaded", f"{_median(dcl):.0f} ms"),
        ("browser: open until the first frame after the script (from navigation)", f"{_median(ready):.0f} ms"),
        ("browser: search a session id until the frame that shows it", f"{_median(search):.0f} ms"),
        ("browser: jump to a session and draw its charts", f"{_median(section):.0f} ms"),
    ]


# in the page: set the search box, then wait for the second frame (the filtered table and details painted)
_SEARCH = """async (q) => {
  const box = document.getElementById("f-search");
  const t0 = performance.now();
  box.value = q;
  box.dispatchEvent(new Event("input", { bubbles: true }));
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  return performance.now() - t0;
}"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--turns", type=int, default=2100, help="turns of the big session (~9.8 entries per turn)")
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--corpus-bytes", type=int, default=100_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--dir", default="/tmp/sessionlab-bench-views")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    from sessionlab.synth import generate_corpus, generate_session

    base = Path(args.dir)
    big_dir = base / f"tree-{args.turns}"
    if not big_dir.exists() or not list(big_dir.glob("*.jsonl")):
        generate_session(big_dir, seed=7, turns=args.turns, branch_prob=0.05, label_prob=0.05)
    big = next(big_dir.glob("*.jsonl"))
    corpus = base / f"corpus-{args.sessions}" / "sessions"
    if not corpus.exists():
        generate_corpus(corpus, n_sessions=args.sessions, target_bytes=args.corpus_bytes, seed=0)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS)
        tree_rows = bench_tree(browser, big, args.repeat)
        report_rows = bench_report(browser, corpus, args.repeat)
        version = browser.version
        browser.close()
    print(f"Machine: {_machine()}; Chromium {version} headless (software rendering)\n")
    for title, rows in (("SessionTree", tree_rows), ("Report", report_rows)):
        print(f"| {title} | |\n|---|---:|")
        for k, v in rows:
            print(f"| {k} | {v} |")
        print()


if __name__ == "__main__":
    main()
