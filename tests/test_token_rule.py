"""pi's token rule has one source (sessionlab.pi.rules: CHARS_PER_TOKEN, IMAGE_CHARS, ROLE_CHARS) and
one text measure (sessionlab._jsjson.js_len): every path that estimates tokens (the object model, the
msgspec path, the C scanner, the Claude Code and Codex readers) takes them from there, agrees on the
same inputs, and follows the table when it changes."""

from __future__ import annotations

import ast
import json
import math
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from sessionlab import entries_table, estimate_tokens, message_from_dict
from sessionlab.pi.rules import CHARS_PER_TOKEN, IMAGE_CHARS, ROLE_CHARS
from tests._native_cases import msg, pi_file

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "sessionlab"
SID = "7f87ba1e-cc5f-4aa4-9efd-91d63c02f399"
IMAGE = {"type": "image", "data": "iVBOR", "mimeType": "image/png"}
CLAUDE_IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"}}
TEXT = "look at this é😀"  # 16 UTF-16 units: the astral character counts 2


def _pi_messages() -> list[dict]:
    """One message of every role the rule names (and one it does not), with every part present."""
    return [
        {"role": "user", "content": [{"type": "text", "text": TEXT}, IMAGE], "timestamp": 1},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "ok"},
                                          {"type": "toolCall", "id": "t1", "name": "Bash", "arguments": {"command": "ls"}}],
         "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5", "stopReason": "toolUse",
         "usage": {"input": 3, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 8}, "timestamp": 2},
        {"role": "toolResult", "toolCallId": "t1", "toolName": "Bash", "isError": False,
         "content": [{"type": "text", "text": "file.txt"}, IMAGE], "timestamp": 3},
        {"role": "bashExecution", "command": "ls -la", "output": "total 0", "exitCode": 0, "cancelled": False,
         "truncated": False, "timestamp": 4},
        {"role": "custom", "customType": "note", "content": [{"type": "text", "text": "remember"}, IMAGE],
         "display": True, "timestamp": 5},
        {"role": "branchSummary", "summary": "went left", "fromId": "x", "timestamp": 6},
        {"role": "compactionSummary", "summary": "so far", "tokensBefore": 10, "timestamp": 7},
        {"role": "planet", "content": "not a role pi counts", "timestamp": 8},
    ]


def _claude_file(folder: Path) -> Path:
    """A Claude Code session holding the same user, assistant and tool-result messages."""
    env = dict(isSidechain=False, userType="external", cwd="/x", sessionId=SID, version="2.1.77", gitBranch="main")
    lines = [
        dict(env, parentUuid=None, type="user", uuid="u1", timestamp="2026-02-03T09:28:53.880Z",
             message={"role": "user", "content": [{"type": "text", "text": TEXT}, CLAUDE_IMAGE]}),
        dict(env, parentUuid="u1", type="assistant", uuid="a1", timestamp="2026-02-03T09:29:07.935Z", requestId="r1",
             message={"model": "claude-sonnet-4-5-20250929", "id": "m1", "type": "message", "role": "assistant",
                      "content": [{"type": "thinking", "thinking": "hmm", "signature": "s"},
                                  {"type": "text", "text": "ok"},
                                  {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}],
                      "stop_reason": "tool_use", "usage": {"input_tokens": 3, "output_tokens": 5}}),
        dict(env, parentUuid="a1", type="user", uuid="u2", timestamp="2026-02-03T09:29:09.935Z",
             message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                                    "content": [{"type": "text", "text": "file.txt"}, CLAUDE_IMAGE]}]}),
    ]
    path = folder / f"{SID}.jsonl"
    path.write_text("\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("rules", ["pi-1.6", "pi-0.58"])
def test_the_claude_reader_counts_by_the_table(tmp_path, rules):
    """Claude Code's user, assistant and tool-result messages get the object model's estimate of the
    same pi message, under either release's rules (pi 1.6 counts the user's image, pi 0.58 does not)."""
    got = entries_table(_claude_file(tmp_path), cache=False, rules=rules)["est_tokens"].to_pylist()
    want = [estimate_tokens(message_from_dict(m), rules=rules) for m in _pi_messages()[:3]]
    assert got == want
    assert want[0] == math.ceil((16 + (IMAGE_CHARS if rules == "pi-1.6" else 0)) / CHARS_PER_TOKEN)


# ------------------------------------------------------------------ one source, checked in the source


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text(encoding="utf-8"))


def test_the_rule_constants_are_written_once():
    """No module but pi/rules.py spells pi's image size or divides by a literal 4 (chars per token)."""
    found = []
    for name, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and type(node.value) is int and node.value in (IMAGE_CHARS,
                                                                                              IMAGE_CHARS // 4):
                found.append(f"{name} {node.value}")
            if (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.FloorDiv))
                    and isinstance(node.right, ast.Constant) and node.right.value == 4):
                found.append(f"{name} {ast.unparse(node)}")
    # (the synthetic generator reserves a quarter of its context window: no token rule)
    assert sorted(found) == ["pi/rules.py 4800", "synth/_builder.py self.window // 4"]


def test_js_len_exists_once():
    """JavaScript's string length is measured by _jsjson.js_len alone (no copy that encodes to UTF-16
    and halves, no local ``_len``/``_js_len`` helper)."""
    copies = []
    for name, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name in ("js_len", "_js_len", "_len") and name != "_jsjson.py":
                copies.append(f"{name}:{node.name}")
            if isinstance(node, ast.Constant) and node.value in ("utf-16-le", "utf_16_le", "utf-16") \
                    and name != "_jsjson.py":
                copies.append(f"{name}:{node.lineno}")
    assert copies == []


def test_the_fast_paths_import_the_table_from_rules():
    """Each path imports the rule from sessionlab.pi.rules (not a copy, not a re-export)."""
    for module in ("pi/tokens.py", "tables/_fast.py", "tables/_native.py", "tables/_pi16.py",
                   "agents/_claude_reader.py", "agents/_codex_reader.py", "pi/compaction/summary_prompt.py"):
        tree = ast.parse((PACKAGE / module).read_text(encoding="utf-8"))
        imported = {(n.module, a.name) for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
        names = {a for m, a in imported if m and m.lstrip(".") in ("rules", "pi.rules")}
        assert names & {"CHARS_PER_TOKEN", "IMAGE_CHARS", "ROLE_CHARS"}, module
        assert not {a for m, a in imported if m and m.lstrip(".") == "tokens"} & {"CHARS_PER_TOKEN", "IMAGE_CHARS",
                                                                                    "ROLE_CHARS"}, module


# ------------------------------------------------------------------ changing the table changes every path

CHANGED_RULES = {"CHARS_PER_TOKEN = 4": "CHARS_PER_TOKEN = 3",
                 "IMAGE_CHARS = 4800": "IMAGE_CHARS = 2400",
                 '"assistant": ("text", "thinking", "toolCall"),': '"assistant": ("text", "toolCall"),',
                 '"bashExecution": ("command", "output"),': '"bashExecution": ("output",),',
                 '"custom": ("content", "images"),': '"custom": ("content",),'}

PROBE = """
import json, os, sys, warnings
warnings.simplefilter("error", UserWarning)  # (a stale scanner would warn, and be left out)
from sessionlab import entries_table, estimate_tokens, message_from_dict
from sessionlab.tables import _native
path, claude, messages = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
out = {"native_available": _native.native_available(), "scan": _native._scan.__file__,
       "accepted": isinstance(_native._scan.Scanner(False).add(open(path, "rb").read()), tuple),
       "native": entries_table(path, cache=False)["est_tokens"].to_pylist(),
       "claude": entries_table(claude, cache=False)["est_tokens"].to_pylist(),
       "objects": [estimate_tokens(message_from_dict(m)) for m in messages]}
os.environ["SESSIONLAB_NATIVE"] = "0"
out["msgspec"] = entries_table(path, cache=False)["est_tokens"].to_pylist()
print(json.dumps(out))
"""


def _copy_project(dest: Path) -> Path:
    shutil.copytree(PACKAGE, dest / "sessionlab", ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd"))
    for name in ("setup.py", "pyproject.toml", "MANIFEST.in"):
        shutil.copy(ROOT / name, dest / name)
    return dest


@pytest.mark.skipif(not (sysconfig.get_config_var("CC") and shutil.which(sysconfig.get_config_var("CC").split()[0])),
                    reason="no C compiler")
def test_changing_the_table_changes_every_path(tmp_path):
    """Edit pi/rules.py (3 chars per token, 2,400 per image, no thinking, no bash command, no custom
    images), rebuild: the scanner, the msgspec path, the object model and the Claude reader all
    follow, and still agree."""
    project = _copy_project(tmp_path / "project")
    rules = project / "sessionlab" / "pi" / "rules.py"
    text = rules.read_text(encoding="utf-8")
    for old, new in CHANGED_RULES.items():
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    rules.write_text(text, encoding="utf-8")
    subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=project, check=True,
                   capture_output=True)
    path = tmp_path / "s.jsonl"
    path.write_bytes(pi_file(*(msg(m) for m in _pi_messages())))
    env = {k: v for k, v in os.environ.items() if k != "SESSIONLAB_NATIVE"} | {"PYTHONPATH": str(project)}
    run = subprocess.run([sys.executable, "-c", PROBE, str(path), str(_claude_file(tmp_path)),
                          json.dumps(_pi_messages())], cwd=project, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["native_available"] and out["accepted"] and out["scan"].startswith(str(project))
    # by hand, under the changed rule
    want = [math.ceil((16 + 2400) / 3), math.ceil((2 + 4 + len('{"command":"ls"}')) / 3), math.ceil((8 + 2400) / 3),
            math.ceil(7 / 3), math.ceil(8 / 3), math.ceil(9 / 3), math.ceil(6 / 3), 0]
    assert out["objects"] == out["native"] == out["msgspec"] == want
    assert out["claude"] == want[:3]
    # and the package as it is counts otherwise
    assert [estimate_tokens(message_from_dict(m)) for m in _pi_messages()] != want
    assert ROLE_CHARS["assistant"] == ("text", "thinking", "toolCall")

