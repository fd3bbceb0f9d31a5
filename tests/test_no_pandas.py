"""After a native load, the analyses that return tables never import pandas (only the ``*_df``
views need it; importing it costs ~0.3 s, more than most analyses take).

pi 0.58 and pi 1.6 files run in one fresh process each: the functions are called one after the other and the
first that imports pandas is named (the ones after it could not be checked in that process)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sessionlab.tables import _native

PI = Path(__file__).parent / "data" / "pi"

CODE = r"""
import json, sys
import sessionlab as sl
from sessionlab.tables.corpus import one_session, select_sessions, session_mask

files, rules = json.loads(sys.argv[1])
t = sl.entries_table(files, rules=rules)
assert "pandas" not in sys.modules, "the load imported pandas"
sid = t["session_id"][0].as_py()
last = t.filter(session_mask(t, sid))["entry_id"][-1].as_py()
policies = [sl.PiThresholdPolicy(60_000), sl.KeepLastTurnsPolicy(60_000), sl.RetainedTailPolicy(60_000),
            sl.FractionPolicy(60_000, 0.5), sl.NeverCompact()]
steps = {
    "contexts": lambda: sl.contexts(t),
    "contexts(at='entries', session_id)": lambda: sl.contexts(t, at="entries", session_id=sid),
    "contexts(at=ids)": lambda: sl.contexts(t, at=[last]),
    "context_members": lambda: sl.context_members(t, at="leaves"),
    "context_messages": lambda: sl.context_messages(t, last, session_id=sid),
    "find_cut_points": lambda: sl.find_cut_points(t),
    "find_cut_points(at='leaves')": lambda: sl.find_cut_points(t, at="leaves"),
    "simulate_compaction.sessions": lambda: sl.simulate_compaction(t, policies).sessions,
    "simulate_compaction.calls": lambda: sl.simulate_compaction(t, policies, branch="all", recorded="keep").calls,
    "fit_prices": lambda: sl.fit_prices(t),
    "usage_by": lambda: sl.usage_by(t, by=["day", "model"], tz="Europe/Berlin"),
    "usage_by(month, branch...)": lambda: sl.usage_by(t, by=["month", "branch", "agent", "session", "usage_kind"],
                                                      since="2000-01-01", until="2100-01-01", session_id=[sid]),
    "branch_costs": lambda: sl.branch_costs(t),
    "cache_efficiency": lambda: sl.cache_efficiency(t, session_id=sid),
    "branch_calls": lambda: sl.branch_calls(t),
    "branch_calls(leaf_id)": lambda: sl.branch_calls(t, session_id=sid, leaf_id=last),
    "select_sessions": lambda: select_sessions(t, sid),
    "one_session": lambda: one_session(t, sid),
    "session_tree": lambda: list(sl.session_tree(t, session_id=sid)),
    "sessions_table": lambda: sl.sessions_table(files),
    "Corpus.sessions": lambda: sl.load(files, rules=rules).sessions,
    "Corpus.labels": lambda: sl.load(files, rules=rules).labels,
    "compaction_diff": lambda: sl.compaction_diff(t),
    "estimate_accuracy": lambda: sl.estimate_accuracy(t),
    "calibrate_estimate": lambda: sl.calibrate_estimate(t).ratios,
    "cache_misses": lambda: sl.cache_misses(t),
    "cache_ttl_whatif": lambda: sl.cache_ttl_whatif(t),
    "tool_stats": lambda: sl.tool_stats(t, by=["tool_name", "agent", "model", "project"]),
    "subagent_costs": lambda: sl.subagent_costs(t),
}
rows = {}
for name, step in steps.items():
    out = step()
    rows[name] = out.num_rows if hasattr(out, "num_rows") else len(out)
    if "pandas" in sys.modules:
        rows["pandas imported by"] = name
        break
print(json.dumps(rows))
"""


def _native_files(folder: Path) -> list[str]:
    """The files of ``folder`` the native scanner loads whole (a file it declines goes through the
    Python loaders, which may import pandas)."""
    return [str(p) for p in sorted(folder.rglob("*.jsonl")) if isinstance(_native._scan.Scanner().add(p.read_bytes()), tuple)]


@pytest.mark.parametrize("folder, rules", [("generated", "pi-1.6"), ("generated-1.6", "pi-1.6"),
                                           ("generated", "pi-0.58")])
def test_analyses_do_not_import_pandas(folder, rules):
    if not _native.native_available():
        pytest.skip("the native scanner is not built")
    files = _native_files(PI / folder)
    assert len(files) >= 5
    out = subprocess.run([sys.executable, "-c", CODE, json.dumps([files, rules])], capture_output=True, text=True)
    if rules == "pi-0.58" and "the load imported pandas" in out.stderr:
        pytest.xfail("apply_rules (tables/_pi16.py) hands compute functions Python values: the load imports pandas")
    assert out.returncode == 0, out.stderr[-3000:]
    rows = json.loads(out.stdout)
    assert "pandas imported by" not in rows, f"pandas imported by {rows.get('pandas imported by')}"
    # the generated pi 0.58 files record no cache writes: no cache miss there (the pi 1.6 ones have them)
    maybe_empty = ("cache_misses", "cache_ttl_whatif") if folder == "generated" else ()
    empty = [name for name, n in rows.items() if n == 0 and name not in maybe_empty]
    assert not empty, f"no rows from {empty}: the check would be vacuous"
    assert len(rows) == 29


USAGE = r"""
import json, sys
from sessionlab.cli._usage import usage_report

out = usage_report("daily", agents=[sys.argv[1]])
print(json.dumps({"days": len(out["daily"]), "pandas": "pandas" in sys.modules}))
"""


@pytest.mark.parametrize("agent", ["goose", "kilo", "opencode", "qwen", "droid", "amp", "copilot", "gemini"])
def test_a_usage_report_does_not_import_pandas(agent):
    """A usage report prices its calls in the loading process, with no pandas (~0.4 s to import)."""
    import os

    from sessionlab import agents

    from ._agent_fixtures import DATA

    folders = {v for spec in agents.specs() for v in spec.env}  # (each agent's folder variables unset)
    env = {k: v for k, v in os.environ.items() if k not in folders}
    env.update(HOME=str(DATA / agent / "home"), SESSIONLAB_CACHE_DIR="")
    out = subprocess.run([sys.executable, "-c", USAGE, agent], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout)
    assert got["days"] > 0 and got["pandas"] is False
