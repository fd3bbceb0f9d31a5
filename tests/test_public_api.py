"""The public surface: an explicit __all__, nothing missing, and a core free of notebook/plot imports."""

from __future__ import annotations

import subprocess
import sys

import sessionlab


def test_all_is_exactly_the_public_names():
    public = {n for n in dir(sessionlab) if not n.startswith("_")}
    modules = {n for n in public if type(getattr(sessionlab, n)).__name__ == "module"}
    assert set(sessionlab.__all__) == public - modules
    assert len(sessionlab.__all__) == len(set(sessionlab.__all__))
    for name in sessionlab.__all__:
        assert getattr(sessionlab, name) is not None


def test_names_the_issues_ask_for_are_exported():
    wanted = """read_session write_session SessionWriter SessionFile LineIssue MessageEntry ThinkingLevelChangeEntry
    ModelChangeEntry ActiveToolsChangeEntry CompactionEntry BranchSummaryEntry CustomEntry CustomMessageEntry
    LabelEntry SessionInfoEntry LeafEntry SessionHeader UserMessage AssistantMessage Usage ToolResultMessage
    BashExecutionMessage CustomMessage CompactionSummaryMessage BranchSummaryMessage InMemorySessionStorage
    JsonlSessionStorage SessionStorage Session open_session build_session_context merge_context_build_options
    SessionContext SessionContextBuildOptions InMemorySessionRepo JsonlSessionRepo SessionError
    entries_table entries_df sessions_table blocks_table issues_table session_tree to_parquet
    contexts context_members context_messages usage_by branch_costs cache_efficiency
    find_cut_points PiThresholdPolicy FractionPolicy KeepLastTurnsPolicy RetainedTailPolicy NeverCompact
    simulate_compaction SimulationResult compact plot_context_timeline plot_usage plot_tree
    BranchExplorer UsageDashboard CompactionLab SessionTree""".split()
    assert set(wanted) <= set(sessionlab.__all__)


def test_core_never_imports_notebook_or_plotting_modules():
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('matplotlib', 'ipywidgets', 'IPython'):\n"
        "            raise ImportError('blocked ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import pkgutil, importlib, sessionlab\n"
        "assert 'BranchExplorer' in dir(sessionlab)\n"
        "for m in pkgutil.walk_packages(sessionlab.__path__, 'sessionlab.'):\n"
        "    if m.name.split('.')[1] not in ('plotting', 'widgets', 'cli', '__main__'):\n"
        "        importlib.import_module(m.name)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('matplotlib', 'ipywidgets', 'IPython')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_notebook_face_loads_lazily_and_says_what_is_missing():
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'ipywidgets':\n"
        "            raise ImportError('blocked ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "from sessionlab import *\n"
        "try:\n"
        "    BranchExplorer(None)\n"
        "except ImportError as e:\n"
        "    print('ImportError:', e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "sessionlab[notebook]" in out.stdout
    from sessionlab import BranchExplorer, plot_tree
    from sessionlab.plotting import plot_tree as direct
    from sessionlab.widgets import BranchExplorer as direct_widget

    assert plot_tree is direct and BranchExplorer is direct_widget
