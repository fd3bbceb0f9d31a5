"""A stale native scanner is refused: the build compiles the hash of the C sources and of pi's token
rule into the extension (``_scan.SOURCE_HASH``), the loader computes the hash of what the package
ships, and an extension built from anything else is left out with one NativeLoaderWarning."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sessionlab import _scan_source
from sessionlab.pi import rules as _rules
from sessionlab.tables import _native, entries_table
from tests._native_cases import needs_scan

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "sessionlab"
DATA = ROOT / "tests" / "data" / "pi" / "real"
RULE = (_rules.CHARS_PER_TOKEN, _rules.IMAGE_CHARS, _rules.ROLE_CHARS)


@needs_scan
def test_the_built_scanner_carries_the_hash_of_the_shipped_sources():
    want = _scan_source.shipped_hash(*RULE)
    assert want is not None and len(want) == 16
    assert _native._scan.SOURCE_HASH == want
    assert _native.stale_reason(_native._scan) is None


def test_the_build_reads_the_rule_the_package_imports():
    """setup.py cannot import the package: it reads pi/rules.py's literals, which must be the values."""
    assert _scan_source.rules_from_source(PACKAGE / "pi" / "rules.py") == RULE


def test_the_generated_header_states_the_rule():
    header = _scan_source.rules_header(*RULE)
    assert "#define CHARS_PER_TOKEN 4\n" in header and "#define IMAGE_CHARS 4800\n" in header
    assert '{"assistant", "text thinking toolCall", PART_TEXT | PART_THINKING | PART_TOOLCALL},' in header
    assert '{"system", "deferred", PART_DEFERRED},' in header  # (left to tables/_pi16.py)
    with pytest.raises(ValueError, match="user.toolCall"):
        _scan_source.rules_header(4, 4800, {"user": ("content", "toolCall")})


@pytest.mark.parametrize("source", [*_scan_source.SOURCES, "rules.py"])
def test_any_edit_of_a_source_or_of_the_rule_changes_the_hash(tmp_path, source):
    for name in _scan_source.SOURCES:
        shutil.copy(PACKAGE / name, tmp_path / name)
    shutil.copy(PACKAGE / "pi" / "rules.py", tmp_path / "rules.py")
    before = _scan_source.source_hash(tmp_path, _scan_source.rules_header(*_scan_source.rules_from_source(
        tmp_path / "rules.py")))
    assert before == _scan_source.shipped_hash(*RULE)
    path = tmp_path / source
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("IMAGE_CHARS = 4800", "IMAGE_CHARS = 4804") if source == "rules.py"
                    else text + "\n/* a comment */\n", encoding="utf-8")
    after = _scan_source.source_hash(tmp_path, _scan_source.rules_header(*_scan_source.rules_from_source(
        tmp_path / "rules.py")))
    assert after != before


def test_without_its_c_sources_the_package_cannot_tell(tmp_path):
    assert _scan_source.source_hash(tmp_path, "") is None


def test_write_rules_header_writes_the_hash_it_returns(tmp_path):
    for name in _scan_source.SOURCES:
        shutil.copy(PACKAGE / name, tmp_path / name)
    (tmp_path / "pi").mkdir()
    shutil.copy(PACKAGE / "pi" / "rules.py", tmp_path / "pi" / "rules.py")
    digest = _scan_source.write_rules_header(tmp_path)
    assert digest == _scan_source.shipped_hash(*RULE)
    text = (tmp_path / _scan_source.HEADER).read_text(encoding="utf-8")
    assert f'#define SCAN_SOURCE_HASH "{digest}"' in text
    mtime = (tmp_path / _scan_source.HEADER).stat().st_mtime_ns
    assert _scan_source.write_rules_header(tmp_path) == digest  # unchanged: not rewritten (no rebuild)
    assert (tmp_path / _scan_source.HEADER).stat().st_mtime_ns == mtime


PROBE = """
import json, sys, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import sessionlab
    from sessionlab.tables import _native
    table = sessionlab.entries_table(sys.argv[1], cache=False, on_bad_lines="skip")
print(json.dumps({"warnings": [[type(w.message).__name__, str(w.message)] for w in caught],
                  "native": _native.native_available(), "package": sessionlab.__file__,
                  "rows": table.num_rows, "est_tokens": table["est_tokens"].to_pylist()}))
"""


@needs_scan
def test_a_header_edit_without_a_rebuild_is_refused_with_one_warning(tmp_path, monkeypatch):
    """A checkout whose _scan_rows.h changed after the build: the extension is left out, one warning
    says so and how to rebuild, and the Python paths give the tables."""
    shutil.copytree(PACKAGE, tmp_path / "sessionlab", ignore=shutil.ignore_patterns("__pycache__"))
    with open(tmp_path / "sessionlab" / "_scan_rows.h", "a", encoding="utf-8") as f:
        f.write("\n/* edited after the build */\n")
    env = {k: v for k, v in os.environ.items() if k != "SESSIONLAB_NATIVE"} | {"PYTHONPATH": str(tmp_path)}
    run = subprocess.run([sys.executable, "-c", PROBE, str(DATA)], cwd=tmp_path, env=env, capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["package"].startswith(str(tmp_path))
    assert out["native"] is False
    [(kind, message)] = out["warnings"]
    assert kind == "NativeLoaderWarning"
    assert "sessionlab._scan is stale" in message and "python setup.py build_ext --inplace" in message
    monkeypatch.setenv("SESSIONLAB_NATIVE", "0")  # the same tables as the Python paths here
    table = entries_table(DATA, cache=False, on_bad_lines="skip")
    assert (out["rows"], out["est_tokens"]) == (table.num_rows, table["est_tokens"].to_pylist())


def test_a_scanner_without_the_hash_is_stale():
    """An extension built before the hash existed (no SOURCE_HASH) is refused too."""
    class Old:
        pass

    reason = _native.stale_reason(Old)
    assert reason is not None and "stale" in reason and "None" in reason
