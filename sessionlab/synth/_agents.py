"""Seeded, deterministic Claude Code transcripts and Codex rollouts for :mod:`sessionlab.synth`.

Claude Code (:func:`generate_claude_session`): ``<root>/projects/<encoded cwd>/<session>.jsonl``
with the lines Claude Code writes: a ``summary`` line, ``file-history-snapshot`` lines, hook
``progress`` side nodes, user prompts, assistant responses written one content block per line
(streaming duplicates sharing ``message.id``/``requestId``, the usage repeated and the output count
growing), tool calls with their ``tool_result`` lines, a ``Task`` call whose subagent runs in
``<session>/subagents/agent-<id>.jsonl`` (sidechain lines with the parent's ``sessionId``, one of
them replaying a parent response under a new request id), a rewind (a second user prompt under the
same parent) and a ``compact_boundary`` with the summary message after it when the prompt grows
past the threshold.

Codex (:func:`generate_codex_session`): ``<root>/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl``
with ``session_meta``, ``turn_context`` per turn (the model changes between turns), user messages,
reasoning, function calls and outputs, ``token_count`` events after each call (cumulative and last
usage, some written twice, some carrying rate limits only), a ``compacted`` line with its
replacement history, and, with ``fork_of=``, a fork that replays its parent's lines first.

Usage follows the context as in the pi generator: each call's prompt is a system prompt plus the
conversation so far (``ceil(chars / 4)`` per message), the part the previous call sent read from
the cache, the rest written to it (Claude) or sent uncached (Codex).
"""

from __future__ import annotations

import json
import random
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ..pi.rules import CHARS_PER_TOKEN
from ._text import Project, code_pool, log_pool, project_for, prose

__all__ = ["generate_claude_session", "generate_codex_session", "CLAUDE_MODELS", "CODEX_MODELS"]

CLAUDE_MODELS = ("claude-sonnet-4-5-20250929", "claude-opus-4-6", "claude-haiku-4-5-20251001")
CODEX_MODELS = ("gpt-5.3-codex", "gpt-5.2-codex")
_CWDS = ("/home/dev/shop", "/home/dev/api-server", "/home/dev/tools/cli", "/home/dev/site")
_SYSTEM = 11800  # tokens of the system prompt and tools
_TOOLS = ("Bash", "Read", "Grep", "Edit")


def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def _dump(obj: dict) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _uid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _tok(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def _encode_cwd(cwd: str) -> str:
    return "".join("-" if ch in "/. ~" else ch for ch in cwd)


class _Claude:
    """One Claude Code transcript being written (main file or a subagent file)."""

    def __init__(self, rng: random.Random, sid: str, cwd: str, t: datetime, *, version: str,
                 sidechain: bool = False, agent_id: str | None = None) -> None:
        self.rng, self.sid, self.cwd, self.t = rng, sid, cwd, t
        self.version, self.sidechain, self.agent_id = version, sidechain, agent_id
        self.lines: list[str] = []
        self.last: str | None = None  # the uuid new entries hang from
        self.context = 0  # tokens of the conversation so far (after the system prompt)
        self.cached = 0  # prompt tokens the previous call cached
        self.proj = project_for(cwd)

    def tick(self, lo: float = 1.0, hi: float = 20.0) -> str:
        self.t += timedelta(seconds=self.rng.uniform(lo, hi))
        return _iso(self.t)

    def env(self, typ: str, parent: str | None, **extra: Any) -> dict:
        d: dict[str, Any] = {"parentUuid": parent, "isSidechain": self.sidechain, "userType": "external",
                             "cwd": self.cwd, "sessionId": self.sid, "version": self.version,
                             "gitBranch": "main"}
        if self.agent_id:
            d["agentId"] = self.agent_id
        d.update(type=typ, uuid=_uid(self.rng), timestamp=self.tick(), **extra)
        return d

    def write(self, d: dict, *, advance: bool = True) -> str:
        self.lines.append(_dump(d))
        if advance:
            self.last = d["uuid"]
        return d["uuid"]

    def snapshot(self, mid: str) -> None:
        self.lines.append(_dump({"type": "file-history-snapshot", "messageId": mid, "snapshot": {
            "messageId": mid, "trackedFileBackups": {}, "timestamp": _iso(self.t)}, "isSnapshotUpdate": False}))

    def user(self, text: str, *, parent: str | None = None, **extra: Any) -> str:
        d = self.env("user", parent if parent is not None else self.last,
                     message={"role": "user", "content": text}, **extra)
        self.snapshot(d["uuid"])
        self.context += _tok(text)
        return self.write(d)

    def response(self, model: str, blocks: list[dict], *, one_hour: bool = False, msg_id: str | None = None,
                 request_id: str | None = None) -> tuple[str, str, dict]:
        """One API response written as one line per block; returns (message id, request id, usage)."""
        rng = self.rng
        prompt = _SYSTEM + self.context
        read = min(self.cached, prompt)
        write = max(prompt - read - 3, 0)
        out = sum(_tok(json.dumps(b.get("input")) if b["type"] == "tool_use"
                       else b.get("text") or b.get("thinking") or "") for b in blocks) + rng.randint(5, 60)
        cc = {"ephemeral_5m_input_tokens": 0 if one_hour else write,
              "ephemeral_1h_input_tokens": write if one_hour else 0}
        usage = {"input_tokens": 3, "cache_creation_input_tokens": write, "cache_read_input_tokens": read,
                 "cache_creation": cc, "output_tokens": out, "service_tier": "standard"}
        msg_id = msg_id or "msg_01" + "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0123456789")
                                              for _ in range(22))
        request_id = request_id or "req_011C" + "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789")
                                                        for _ in range(20))
        grows = rng.random() < 0.5  # some responses repeat the final usage on every line
        for k, b in enumerate(blocks):
            u = dict(usage)
            if grows and k < len(blocks) - 1:
                u["output_tokens"] = max(1, out * (k + 1) // (len(blocks) + 2))
            msg = {"model": model, "id": msg_id, "type": "message", "role": "assistant", "content": [b],
                   "stop_reason": ("tool_use" if blocks[-1]["type"] == "tool_use" else "end_turn")
                   if k == len(blocks) - 1 else None, "stop_sequence": None, "usage": u}
            self.write(self.env("assistant", self.last, message=msg, requestId=request_id))
        self.context += out
        self.cached = prompt
        return msg_id, request_id, usage

    def tool_result(self, call_id: str, text: str, *, hook: bool) -> None:
        parent = self.last
        if hook:  # a PostToolUse hook: a progress side node under the tool call
            self.write(self.env("progress", parent, data={"type": "hook_progress", "hookEvent": "PostToolUse",
                                                          "hookName": "PostToolUse:Bash", "command": "notify.sh"},
                                toolUseID=call_id, parentToolUseID=call_id), advance=self.rng.random() < 0.5)
        d = self.env("user", self.last, message={"role": "user", "content": [
            {"tool_use_id": call_id, "type": "tool_result", "content": text, "is_error": self.rng.random() < 0.1}]},
            toolUseResult={"stdout": text[:200], "stderr": "", "interrupted": False, "isImage": False})
        self.context += _tok(text)
        self.write(d)

    def tool_call(self, model: str, *, one_hour: bool = False) -> None:
        rng, proj = self.rng, self.proj
        tool = rng.choice(_TOOLS)
        call_id = "toolu_01" + "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijk0123456789") for _ in range(22))
        inp = ({"command": proj.test_cmd} if tool == "Bash" else {"file_path": f"{self.cwd}/{rng.choice(proj.files)}"}
               if tool != "Grep" else {"pattern": rng.choice(proj.symbols)})
        blocks: list[dict] = [
            {"type": "thinking", "thinking": prose(rng, "think", rng.randint(1, 4), proj), "signature": "sig"},
            {"type": "text", "text": prose(rng, "say", rng.randint(1, 3), proj)},
            {"type": "tool_use", "id": call_id, "name": tool, "input": inp}]
        if rng.random() < 0.3:
            blocks = blocks[1:]
        self.response(model, blocks, one_hour=one_hour)
        pool = log_pool(proj.lang) if tool == "Bash" else code_pool(proj.lang)
        _, text = pool.take(rng, rng.randint(5, 400))
        self.tool_result(call_id, text, hook=rng.random() < 0.4)


def _turn(c: _Claude, model: str, calls: int) -> None:
    for _ in range(calls):
        c.tool_call(model, one_hour=c.rng.random() < 0.1)
    c.response(model, [{"type": "text", "text": prose(c.rng, "say", c.rng.randint(2, 5), c.proj)}])
    c.write(c.env("system", c.last, subtype="turn_duration", durationMs=c.rng.randint(2000, 90000), isMeta=False),
            advance=False)


def generate_claude_session(root: str | Path, *, seed: int = 0, turns: int = 8, start: datetime | None = None,
                            model: str | None = None, compact_at: int = 90_000, subagent: bool = True,
                            cwd: str | None = None) -> Path:
    """Write one Claude Code transcript (and its subagent file) under ``root`` (a config folder
    like ``~/.claude``); returns the main file's path.

    Example:
        >>> import tempfile
        >>> p = generate_claude_session(tempfile.mkdtemp(), seed=1, turns=3)
        >>> p.parent.parent.name
        'projects'
    """
    rng = random.Random(f"claude-{seed}")
    cwd = cwd or rng.choice(_CWDS)
    sid = _uid(rng)
    t = start or datetime(2026, 1, 30, 21, 0, tzinfo=UTC) + timedelta(hours=rng.randint(0, 90))
    version = rng.choice(("2.1.39", "2.1.77", "2.0.64"))
    model = model or rng.choice(CLAUDE_MODELS[:2])
    c = _Claude(rng, sid, cwd, t, version=version)
    c.write(c.env("progress", None, data={"type": "hook_progress", "hookEvent": "SessionStart",
                                           "hookName": "SessionStart:startup", "command": "start.sh"},
                  toolUseID="hook-start", parentToolUseID="hook-start"))
    sub_lines: list[str] = []
    replay: tuple | None = None
    fork_at: str | None = None
    for turn in range(turns):
        c.tick(30, 2400)  # the user thinks between turns
        c.user(prose(rng, "ask", rng.randint(1, 3), c.proj))
        if turn == 1:
            fork_at = c.last
        if subagent and turn == 2:
            sub_lines, call_id = _subagent(c, model, replay)
        _turn(c, model, rng.randint(1, 4))
        if turn == 0:
            replay = tuple(json.loads(c.lines[-2])["message"][k] for k in ("id", "model")) if c.lines else None
        if turn == 3 and fork_at is not None:  # a rewind: another prompt under an earlier message
            c.tick(5, 60)
            keep = c.context
            c.user(prose(rng, "ask", 1, c.proj), parent=fork_at)
            _turn(c, model, 1)
            c.context = keep
        if _SYSTEM + c.context > compact_at:
            _claude_compaction(c)
    return _write_claude(c, Path(root), sub_lines)


def _claude_compaction(c: _Claude) -> None:
    """An automatic compaction: the boundary line, then the summary as the next user message."""
    pre = _SYSTEM + c.context
    summary = "This session is being continued from a previous conversation that ran out of context. " \
              + prose(c.rng, "done", 5, c.proj)
    b = c.env("system", None, subtype="compact_boundary", content="Conversation compacted", level="info",
              isMeta=False, logicalParentUuid=c.last,
              compactMetadata={"trigger": "auto", "preTokens": pre, "postTokens": _tok(summary) + 2000})
    c.write(b)
    c.context, c.cached = 0, 0
    c.user(summary, isCompactSummary=True, isVisibleInTranscriptOnly=True)


def _write_claude(c: _Claude, root: Path, sub_lines: list[str]) -> Path:
    """The transcript (a title line first) in Claude Code's project folder, and its subagent's file."""
    folder = root / "projects" / _encode_cwd(c.cwd)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{c.sid}.jsonl"
    head = _dump({"type": "summary", "summary": prose(c.rng, "done", 1, c.proj)[6:], "leafUuid": c.last})
    path.write_text("\n".join([head] + c.lines) + "\n", encoding="utf-8")
    if sub_lines:
        sub = folder / c.sid / "subagents" / f"agent-{json.loads(sub_lines[0])['agentId']}.jsonl"
        sub.parent.mkdir(parents=True, exist_ok=True)
        sub.write_text("\n".join(sub_lines) + "\n", encoding="utf-8")
    return path


def _subagent(c: _Claude, model: str, replay: tuple | None) -> tuple[list[str], str]:
    """A Task call in ``c`` and the subagent transcript it runs (sidechain lines)."""
    rng = c.rng
    call_id = "toolu_01" + "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789") for _ in range(22))
    prompt = prose(rng, "ask", 2, c.proj)
    c.response(model, [{"type": "tool_use", "id": call_id, "name": "Task",
                        "input": {"description": "explore", "prompt": prompt, "subagent_type": "Explore"}}])
    agent_id = "a" + "".join(rng.choice("0123456789abcdef") for _ in range(16))
    s = _Claude(rng, c.sid, c.cwd, c.t, version=c.version, sidechain=True, agent_id=agent_id)
    s.user(prompt, parent=None)
    s.lines = [ln for ln in s.lines if '"file-history-snapshot"' not in ln]
    sub_model = CLAUDE_MODELS[2]
    if replay is not None:  # a replayed parent response: same message id, new request id
        s.response(replay[1], [{"type": "text", "text": prose(rng, "say", 1, c.proj)}], msg_id=replay[0])
    for _ in range(rng.randint(2, 4)):
        s.tool_call(sub_model)
    s.response(sub_model, [{"type": "text", "text": prose(rng, "say", 3, c.proj)}])
    c.t = s.t
    d = c.env("user", c.last, message={"role": "user", "content": [
        {"tool_use_id": call_id, "type": "tool_result", "content": prose(rng, "say", 3, c.proj)}]},
        toolUseResult={"status": "completed", "agentId": agent_id})
    c.write(d)
    return s.lines, call_id


# ---------------------------------------------------------------------------------------------
# Codex


class _Codex:
    def __init__(self, rng: random.Random, t: datetime) -> None:
        self.rng, self.t = rng, t
        self.lines: list[str] = []
        self.context = 0
        self.cached = 0
        self.total = [0, 0, 0, 0]  # input, cached, output, reasoning (cumulative)

    def tick(self, lo: float = 0.5, hi: float = 15.0) -> str:
        self.t += timedelta(seconds=self.rng.uniform(lo, hi))
        return _iso(self.t)

    def line(self, typ: str, payload: dict) -> None:
        self.lines.append(_dump({"timestamp": self.tick(), "type": typ, "payload": payload}))

    def item(self, payload: dict) -> None:
        self.line("response_item", payload)

    def token_count(self, out: int, reasoning: int, window: int = 272000) -> None:
        prompt = 9000 + self.context
        reasoning = min(reasoning, out)  # (part of the output)
        cached = min(self.cached, prompt) // 256 * 256
        last = {"input_tokens": prompt, "cached_input_tokens": cached, "output_tokens": out,
                "reasoning_output_tokens": reasoning, "total_tokens": prompt + out}
        for i, v in enumerate((prompt, cached, out, reasoning)):
            self.total[i] += v
        total = {"input_tokens": self.total[0], "cached_input_tokens": self.total[1], "output_tokens": self.total[2],
                 "reasoning_output_tokens": self.total[3], "total_tokens": self.total[0] + self.total[2]}
        rl = {"primary": {"used_percent": round(self.rng.uniform(1, 60), 1), "window_minutes": 300,
                          "resets_at": 1775560000}, "secondary": None}
        ev = {"type": "token_count", "info": {"total_token_usage": total, "last_token_usage": last,
                                              "model_context_window": window}, "rate_limits": rl}
        self.line("event_msg", ev)
        if self.rng.random() < 0.25:  # the same event again
            self.line("event_msg", ev)
        self.cached = prompt
        self.context += out


def _codex_fork(c: _Codex, meta: dict, fork_of: Path) -> list[str]:
    """A fork's replayed parent lines; the parent's token totals and clock carry on in ``c``."""
    parent_lines = fork_of.read_text(encoding="utf-8").splitlines()
    pmeta = json.loads(parent_lines[0])["payload"]
    meta["forked_from_id"] = pmeta["id"]
    replayed = parent_lines[1:]
    for ln in replayed:  # carry the parent's state on
        d = json.loads(ln)
        p = d["payload"]
        if d["type"] == "event_msg" and p.get("type") == "token_count" and p.get("info"):
            tot = p["info"]["total_token_usage"]
            c.total = [tot["input_tokens"], tot["cached_input_tokens"], tot["output_tokens"],
                       tot["reasoning_output_tokens"]]
            c.cached = p["info"]["last_token_usage"]["input_tokens"]
            c.context = c.cached - 9000 + p["info"]["last_token_usage"]["output_tokens"]
    c.t = max(c.t, datetime.fromisoformat(json.loads(replayed[-1])["timestamp"].replace("Z", "+00:00")))
    meta["timestamp"] = _iso(c.t)
    return replayed


def _codex_turn(c: _Codex, proj: Project, cwd: str, *, model: str, first: bool, compact_at: int) -> None:
    """One turn: its context line, the user's ask, one to four tool calls with their reasoning, the
    answer, and a compaction when the context has grown past ``compact_at``."""
    rng = c.rng
    c.tick(30, 1800)
    turn_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    c.line("turn_context", {"turn_id": turn_id, "cwd": cwd, "approval_policy": "on-request",
                            "sandbox_policy": {"type": "workspace-write", "network_access": False},
                            "model": model, "effort": "medium", "summary": "auto"})
    ask = prose(rng, "ask", rng.randint(1, 2), proj)
    c.line("event_msg", {"type": "user_message", "message": ask, "images": []})
    c.item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": ask}]})
    c.context += _tok(ask)
    if first:
        c.line("event_msg", {"type": "token_count", "info": None, "rate_limits": {"primary": None}})
    for _ in range(rng.randint(1, 4)):
        think = prose(rng, "think", 2, proj)
        c.item({"type": "reasoning", "summary": [{"type": "summary_text", "text": think}], "content": None,
                "encrypted_content": "gAAAA" + "x" * rng.randint(100, 600)})
        call_id = "call_" + "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(24))
        args = json.dumps({"cmd": proj.test_cmd if rng.random() < 0.5 else f"cat {rng.choice(proj.files)}"})
        c.item({"type": "function_call", "name": "exec_command", "arguments": args, "call_id": call_id})
        c.token_count(_tok(think) + _tok(args) + rng.randint(10, 200), rng.randint(0, 300))
        pool = log_pool(proj.lang) if rng.random() < 0.5 else code_pool(proj.lang)
        _, out = pool.take(rng, rng.randint(5, 300))
        c.item({"type": "function_call_output", "call_id": call_id, "output": out})
        c.context += _tok(out)
    say = prose(rng, "say", rng.randint(2, 5), proj)
    c.item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": say}]})
    c.token_count(_tok(say) + rng.randint(10, 100), rng.randint(0, 200))
    c.line("event_msg", {"type": "task_complete", "turn_id": turn_id, "last_agent_message": say})
    if 9000 + c.context > compact_at:
        summary = prose(rng, "done", 4, proj)
        c.line("compacted", {"message": summary, "replacement_history": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": ask}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": summary}]}]})
        c.line("event_msg", {"type": "context_compacted"})
        c.context, c.cached = _tok(summary) + _tok(ask), 0


def generate_codex_session(root: str | Path, *, seed: int = 0, turns: int = 6, start: datetime | None = None,
                           compact_at: int = 60_000, fork_of: str | Path | None = None) -> Path:
    """Write one Codex rollout under ``root`` (a folder like ``~/.codex``); returns its path.

    With ``fork_of`` (the path of a rollout written by this function), the new rollout is a fork:
    its ``session_meta`` has ``forked_from_id`` and it replays the parent's lines before its own.

    Example:
        >>> import tempfile
        >>> p = generate_codex_session(tempfile.mkdtemp(), seed=1, turns=2)
        >>> p.name.startswith("rollout-")
        True
    """
    rng = random.Random(f"codex-{seed}")
    tid = str(uuid.UUID(int=rng.getrandbits(128), version=7)) if hasattr(uuid, "uuid7") else _uid(rng)
    cwd = rng.choice(_CWDS)
    t = start or datetime(2026, 1, 31, 20, 0, tzinfo=UTC) + timedelta(hours=rng.randint(0, 80))
    c = _Codex(rng, t)
    proj = project_for(cwd)
    meta = {"id": tid, "timestamp": _iso(t), "cwd": cwd, "originator": "codex_cli_rs", "cli_version": "0.120.0",
            "source": "cli", "model_provider": "openai", "git": {"commit_hash": "4e1d9c2", "branch": "main"}}
    replayed = _codex_fork(c, meta, Path(fork_of)) if fork_of is not None else []
    c.lines.append(_dump({"timestamp": _iso(c.t), "type": "session_meta", "payload": meta}))
    c.lines.extend(replayed)
    if fork_of is None:
        c.item({"type": "message", "role": "developer", "content": [
            {"type": "input_text", "text": "<permissions instructions>workspace-write</permissions instructions>"}]})
    for turn in range(turns):
        _codex_turn(c, proj, cwd, model=CODEX_MODELS[0] if turn < max(2, turns - 2) else CODEX_MODELS[1],
                    first=turn == 0 and fork_of is None, compact_at=compact_at)
    stamp = datetime.fromisoformat(str(meta["timestamp"]).replace("Z", "+00:00"))
    folder = Path(root) / "sessions" / f"{stamp:%Y}" / f"{stamp:%m}" / f"{stamp:%d}"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"rollout-{stamp:%Y-%m-%dT%H-%M-%S}-{tid}.jsonl"
    path.write_text("\n".join(c.lines) + "\n", encoding="utf-8")
    return path
