"""The engine of :mod:`sessionlab.synth`: the price table and a builder that appends entries as pi does.

:class:`_Builder` keeps, for every entry, what pi would know there (:class:`_State`: the context
sent to the model, the last usage, the cached prefix, the last compaction), so usage, compaction
cut points and branches stay consistent however the tree is walked.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..pi.compaction.compact import format_file_operations
from ..pi.io import to_line
from ..pi.model import (
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryEntry,
    CompactionEntry,
    ContextEditEntry,
    Cost,
    CustomEntry,
    CustomMessageEntry,
    ImageContent,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionInfoEntry,
    SystemMessage,
    TextContent,
    ThinkingContent,
    ThinkingLevelChangeEntry,
    ToolCall,
    ToolResultMessage,
    Usage,
    UsageEntry,
    UserMessage,
)
from ..pi.rules import CHARS_PER_TOKEN
from ..pi.tokens import estimate_tokens as _estimate_tokens
from ._text import Project, b64, log_pool, project_for, prose
from ._tools import TOOLS

__all__ = ["LABELS", "MODELS", "NAMES", "THINKING_LEVELS", "Builder", "ModelSpec", "iso"]

@dataclass(frozen=True, slots=True, kw_only=True)
class ModelSpec:
    """A model the generator can call; prices in USD per million tokens."""

    provider: str
    model: str
    api: str
    input: float
    output: float
    cache_read: float
    cache_write: float
    context_window: int


MODELS: dict[str, ModelSpec] = {
    m.model: m
    for m in (
        ModelSpec(provider="anthropic", model="claude-sonnet-4-5", api="anthropic-messages", input=3, output=15,
                  cache_read=0.3, cache_write=3.75, context_window=200_000),
        ModelSpec(provider="anthropic", model="claude-opus-4-5", api="anthropic-messages", input=5, output=25,
                  cache_read=0.5, cache_write=6.25, context_window=200_000),
        ModelSpec(provider="openai", model="gpt-5.1-codex", api="openai-responses", input=1.25, output=10,
                  cache_read=0.125, cache_write=0, context_window=400_000),
        ModelSpec(provider="google", model="gemini-2.5-pro", api="google-generative-ai", input=1.25, output=10,
                  cache_read=0.31, cache_write=0, context_window=1_048_576),
    )
}
"""The price table: model id -> :class:`ModelSpec`."""

THINKING_LEVELS = ("off", "minimal", "low", "medium", "high")
THINKING_LEVELS_16 = THINKING_LEVELS + ("xhigh", "max")  # pi 1.6 adds levels above high
# pi 1.6's tools as its system message announces them (name, description, JSON schema)
_TOOLS = tuple(
    {"name": name, "description": desc,
     "parameters": {"type": "object", "properties": {k: {"type": "string"} for k in keys}, "required": list(keys[:1])}}
    for name, desc, keys in (
        ("read", "Read the contents of a file.", ("path", "offset", "limit")),
        ("bash", "Execute a bash command in the working directory.", ("command", "timeout")),
        ("edit", "Replace exact text in a file.", ("path", "oldText", "newText")),
        ("write", "Write content to a file.", ("path", "content")),
        ("grep", "Search file contents for a pattern.", ("pattern", "path")),
        ("ls", "List a directory.", ("path",)),
    ))
_TITLE_MODEL = "gemini-2.5-pro"
LABELS = ("start", "good-state", "before-refactor", "bug-repro", "tests-green", "wip", "checkpoint", "review")
NAMES = ("Fix flaky tests", "Refactor session loader", "Add --verbose flag", "Investigate slow build",
          "Cache invalidation bug", "  Docs pass  ", "Port parser to new API", "Release prep")
_ERRORS = ('529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
           "terminated", "fetch failed",
           ('429 {"type":"error","error":{"type":"rate_limit_error",'
            '"message":"This request would exceed the rate limit for your organization"}}'))
_BRANCH_PREAMBLE = ("The user explored a different conversation branch before returning here.\n"
                    "Summary of that exploration:\n\n")
_RESERVE_TOKENS = 16_384
_KEEP_RECENT_TOKENS = 20_000


def iso(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


def _cost(spec: ModelSpec, inp: int, out: int, cr: int, cw: int) -> Cost:
    # pi's calculateCost, same float operations in the same order
    ci = spec.input / 1000000 * inp
    co = spec.output / 1000000 * out
    ccr = spec.cache_read / 1000000 * cr
    ccw = spec.cache_write / 1000000 * cw
    return Cost(input=ci, output=co, cache_read=ccr, cache_write=ccw, total=ci + co + ccr + ccw)


_ZERO_USAGE = Usage(input=0, output=0, cache_read=0, cache_write=0, total_tokens=0,
                    cost=Cost(input=0, output=0, cache_read=0, cache_write=0, total=0))


@dataclass(frozen=True, slots=True)
class _State:
    """What pi would know at an entry: the context sent to the model and the cache."""

    ctx: int  # estimated tokens of the LLM context (compaction summary + kept + later messages)
    usage_total: int | None  # totalTokens of the last valid assistant since the last compaction
    trailing: int  # pi's estimate of the messages after that assistant
    cached: int  # prompt prefix cached by the last call
    cache_model: str | None
    compaction: str | None  # id of the last compaction on the path


class Builder:
    """Appends entries like pi's SessionManager, keeping per-entry state for usage and compaction."""

    def __init__(self, rng: random.Random, *, cwd: str, start_ms: int, model: str, thinking: str,
                 compaction_window: int, result_scale: float, pi16: bool = True) -> None:
        self.rng = rng
        self.pi16 = pi16  # write what pi 1.6 writes (system messages, usage entries, edits...)
        self.rules = "pi-1.6" if pi16 else "pi-0.58"
        self.system: SystemMessage | None = None
        self.cwd = cwd
        self.proj: Project = project_for(cwd)
        self.clock = start_ms
        self.lines: list[bytes] = []
        self.size = 0
        self.ids: set[str] = set()
        self.parent: dict[str, str | None] = {}
        self.state: dict[str, _State] = {}
        self.est: dict[str, int] = {}  # message entries: pi's token estimate
        self.excluded: set[str] = set()  # messages kept out of the context (excludeFromContext)
        self.kind: dict[str, str] = {}  # message entries: role (assistant: "assistant:<stopReason>")
        self.fileops: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
        self.comp_details: dict[str, dict[str, list[str]]] = {}
        self.leaf: str | None = None
        self.model = MODELS[model]
        self.thinking = thinking
        self.window = compaction_window
        self.scale = result_scale
        self.system_tokens = rng.randint(2500, 9000)
        self.labels: dict[str, str] = {}
        self.n_tool = 0
        self.settings: dict[str, tuple[str, str]] = {}  # model and thinking changes: id -> (kind, value)

    # -- plumbing ---------------------------------------------------------------------------

    def new_id(self) -> str:
        while True:
            i = f"{self.rng.getrandbits(32):08x}"
            if i not in self.ids:
                self.ids.add(i)
                return i

    def tick(self, lo: int, hi: int) -> int:
        self.clock += self.rng.randint(lo, hi)
        return self.clock

    def write(self, obj: Any) -> None:
        b = to_line(obj).encode("utf-8")
        self.lines.append(b)
        self.size += len(b) + 1

    def cur(self) -> _State:
        if self.leaf is None:
            return _State(0, None, 0, 0, None, None)
        return self.state[self.leaf]

    def append(self, make: Any, st: _State, *, parent: str | None | bool = False) -> str:
        """Append the entry ``make(id, parent_id, timestamp)`` at the leaf (or at ``parent``)."""
        eid = self.new_id()
        pid = self.leaf if parent is False else parent
        entry = make(eid, pid, iso(self.tick(1, 40)))
        self.write(entry)
        self.parent[eid] = pid  # type: ignore[assignment]
        self.state[eid] = st
        self.leaf = eid
        return eid

    def estimate(self, msg: Any) -> int:
        return _estimate_tokens(msg, rules=self.rules)

    def append_message(self, msg: Any, *, in_ctx: bool = True, role: str | None = None,
                       valid_usage: int | None = None) -> str:
        est = self.estimate(msg)
        s = self.cur()
        if valid_usage is not None:
            st = _State(s.ctx + est, valid_usage, 0, s.cached, s.cache_model, s.compaction)
        else:
            st = _State(s.ctx + (est if in_ctx else 0), s.usage_total, s.trailing + est, s.cached,
                        s.cache_model, s.compaction)
        eid = self.append(lambda i, p, t: MessageEntry(id=i, parent_id=p, timestamp=t, message=msg), st)
        self.est[eid] = est
        if not in_ctx:
            self.excluded.add(eid)
        self.kind[eid] = role or msg.role
        return eid

    def path(self, leaf: str | None, stop: str | None = None) -> list[str]:
        out = []
        node = leaf
        while node is not None and node != stop:
            out.append(node)
            node = self.parent[node]
        out.reverse()
        return out

    # -- non-message entries -------------------------------------------------------------------

    def model_change(self, model: str, *, root: bool = False) -> None:
        self.model = spec = MODELS[model]
        st = self.cur()
        eid = self.append(lambda i, p, t: ModelChangeEntry(id=i, parent_id=p, timestamp=t, provider=spec.provider,
                                                           model_id=spec.model), st, parent=None if root else False)
        self.settings[eid] = ("model", model)

    def thinking_change(self, level: str) -> None:
        self.thinking = level
        eid = self.append(lambda i, p, t: ThinkingLevelChangeEntry(id=i, parent_id=p, timestamp=t,
                                                                   thinking_level=level), self.cur())
        self.settings[eid] = ("thinking", level)

    def label(self, target: str, label: str | None) -> None:
        if label:
            self.labels[target] = label
        else:
            self.labels.pop(target, None)
        self.append(lambda i, p, t: LabelEntry(id=i, parent_id=p, timestamp=t, target_id=target, label=label),
                    self.cur())

    def session_name(self, name: str) -> None:
        self.append(lambda i, p, t: SessionInfoEntry(id=i, parent_id=p, timestamp=t, name=name.strip()), self.cur())

    def custom(self) -> None:
        rng = self.rng
        data: Any
        if rng.random() < 0.6:
            todos = [{"id": k + 1, "text": prose(rng, "ask", 1, self.proj), "done": rng.random() < 0.5}
                     for k in range(rng.randint(1, 6))]
            ctype, data = "todo-state", {"todos": todos}
        else:
            ctype, data = "git-checkpoint", {"ref": f"{rng.getrandbits(160):040x}", "dirty": rng.random() < 0.3}
        self.append(lambda i, p, t: CustomEntry(id=i, parent_id=p, timestamp=t, custom_type=ctype, data=data),
                    self.cur())

    def custom_message(self) -> None:
        rng = self.rng
        if rng.random() < 0.5:
            ctype, display = "plan-mode", True
            content: Any = "Plan mode is on. Propose a plan first and wait for approval before editing files."
            details: Any = {"enabled": True}
        else:
            f = rng.choice(self.proj.files)
            ctype, display = "file-watcher", False
            content = (TextContent(text=f"{f} changed on disk outside the session ({rng.randint(1, 80)} lines)."),)
            details = {"path": f, "event": "change"}
        est = math.ceil(len(content if isinstance(content, str) else content[0].text) / CHARS_PER_TOKEN)
        s = self.cur()
        st = _State(s.ctx + est, s.usage_total, s.trailing + est, s.cached, s.cache_model, s.compaction)
        self.append(lambda i, p, t: CustomMessageEntry(id=i, parent_id=p, timestamp=t, custom_type=ctype,
                                                       content=content, display=display, details=details), st)

    def bash_execution(self) -> None:
        rng = self.rng
        exclude = rng.random() < 0.3
        cmd = rng.choice(("git status", "git diff --stat", "ls -la", self.proj.test_cmd, "git log --oneline -5"))
        n = int(rng.choice((1, 3, 8, 30, 120)) * self.scale) + 1
        _, out = log_pool(self.proj.lang).take(rng, n)
        truncated = n > 100 and rng.random() < 0.5
        code = 0 if rng.random() < 0.8 else 1
        ts = self.tick(200, 20000)
        msg = BashExecutionMessage(
            command=cmd, output=out, exit_code=code, cancelled=False, truncated=truncated,
            full_output_path=f"/tmp/pi-bash-{rng.getrandbits(32):08x}.log" if truncated else None,
            timestamp=ts, exclude_from_context=True if exclude else None)
        self.append_message(msg, in_ctx=not exclude)

    # -- pi 1.6 -------------------------------------------------------------------------------

    def system_message(self) -> None:
        """The system prompt, its sections and the tools it adds (pi 1.6 writes it as a message)."""
        rng = self.rng
        content = (f"You are pi, a coding agent working in {self.cwd}. "
                   + prose(rng, "say", rng.randint(2, 6), self.proj))
        sections = {"<environment>": f"<environment>cwd: {self.cwd}\nos: linux</environment>",
                    "<project-rules>": "<project-rules>" + prose(rng, "say", rng.randint(1, 4), self.proj)
                    + "</project-rules>"}
        self.system = SystemMessage(content=content, sections=sections, tools_added=list(_TOOLS),
                                    timestamp=self.tick(1, 20))
        self.append_message(self.system)

    def usage_entry(self, kind: str, prompt: int, output: int, note: str | None = None) -> None:
        """Spend that is no message: a title, a summary... (a ``usage`` entry, pi 1.6)."""
        spec = MODELS[_TITLE_MODEL]
        cr = (prompt // 2 // 128) * 128 if prompt > 2048 else 0
        inp = prompt - cr
        usage = Usage(input=inp, output=output, cache_read=cr, cache_write=0, total_tokens=inp + output + cr,
                      cost=_cost(spec, inp, output, cr, 0))
        self.append(lambda i, p, t: UsageEntry(id=i, parent_id=p, timestamp=t, kind=kind, provider=spec.provider,
                                               model=spec.model, usage=usage, note=note), self.cur())

    def summary_usage(self, prompt: int, summary_tokens: int) -> Usage:
        """The usage of a summarisation call with the current model."""
        spec = self.model
        out = summary_tokens + self.rng.randint(5, 80)
        cr = min(self.cur().cached, prompt) if self.cur().cache_model == spec.model else 0
        inp = prompt - cr
        return Usage(input=inp, output=out, cache_read=cr, cache_write=0, total_tokens=inp + out + cr,
                     cost=_cost(spec, inp, out, cr, 0))

    def context_edit(self, target: str, text: str | None) -> None:
        """Replace ``target``'s content by ``text`` in the context, or take it out (``None``)."""
        s = self.cur()
        before = self.est.get(target, 0)
        repl = None if text is None else {"content": [{"type": "text", "text": text}]}
        after = 0 if text is None else math.ceil(len(text) / CHARS_PER_TOKEN)
        st = _State(max(s.ctx - before + after, 0), s.usage_total, s.trailing, s.cached, s.cache_model, s.compaction)
        self.append(lambda i, p, t: ContextEditEntry(id=i, parent_id=p, timestamp=t, target_id=target,
                                                     replacement=repl), st)
        self.est[target] = after

    def maybe_elide(self) -> None:
        """Now and then, elide a large tool result on the branch (pi 1.6 context edit)."""
        if not self.pi16 or self.rng.random() > 0.08:
            return
        big = [e for e in self.path(self.leaf)[-60:] if self.kind.get(e) == "toolResult" and self.est.get(e, 0) > 400]
        if big:
            self.context_edit(self.rng.choice(big), "[tool output elided by context edit]")

    # -- conversation ----------------------------------------------------------------------

    def user(self, *, first: bool = False) -> str:
        rng = self.rng
        text = prose(rng, "ask", rng.choice((1, 1, 2, 3, 6)), self.proj)
        ts = self.tick(5_000, 600_000) if not first else self.tick(2_000, 30_000)
        r = rng.random()
        content: Any
        if r < 0.04:
            img = ImageContent(data=b64(rng, rng.randint(2_000, 30_000), b"\x89PNG\r\n\x1a\n"), mime_type="image/png")
            content = (TextContent(text=text), img)
        elif r < 0.5:
            content = (TextContent(text=text),)
        else:
            content = text
        return self.append_message(UserMessage(content=content, timestamp=ts))

    def _thinking_block(self) -> ThinkingContent:
        rng, spec = self.rng, self.model
        text = prose(rng, "think", rng.randint(1, 8), self.proj)
        if spec.provider == "anthropic":
            sig = b64(rng, rng.randint(150, 900), b"\x12")
        elif spec.provider == "openai":
            sig = ('{"type":"reasoning","id":"rs_' + f"{rng.getrandbits(192):048x}"
                   + '","encrypted_content":"' + b64(rng, rng.randint(300, 1500)) + '","summary":[]}')
        else:
            sig = None
        return ThinkingContent(thinking=text, thinking_signature=sig)

    def _tool_call_id(self) -> str:
        rng, p = self.rng, self.model.provider
        self.n_tool += 1
        if p == "anthropic":
            return "toolu_01" + b64(rng, 17)[:22].replace("+", "A").replace("/", "b")
        if p == "openai":
            return f"call_{b64(rng, 18)[:24].replace('+', 'x').replace('/', 'y')}|fc_{rng.getrandbits(192):048x}"
        return f"tool_{self.n_tool}_{rng.getrandbits(40):010x}"

    def _tool(self) -> tuple[ToolCall, ToolResultMessage, str | None, str | None]:
        """A tool call and its result; also the (read, modified) path it touches."""
        rng = self.rng
        cid = self._tool_call_id()
        name = rng.choices(("read", "bash", "edit", "write", "grep", "ls"), (34, 24, 20, 5, 12, 5))[0]
        f = rng.choice(self.proj.files)
        path = f if rng.random() < 0.6 else f"{self.cwd}/{f}"
        run = TOOLS[name](self, f, path)
        call = ToolCall(id=cid, name=name, arguments=run.args)
        result = ToolResultMessage(tool_call_id=cid, tool_name=name, content=(TextContent(text=run.text),),
                                   details=run.details, is_error=run.is_error, timestamp=0)
        return call, result, run.read, run.mod

    def assistant(self, blocks: tuple, stop: str, *, out_extra: int = 0) -> str:
        """Append an assistant message with usage derived from the context at the leaf."""
        rng, spec = self.rng, self.model
        s = self.cur()
        start = self.tick(300, 4000)
        probe = AssistantMessage(content=blocks)
        output = self.estimate(probe) + out_extra + rng.randint(5, 60)
        prompt = self.system_tokens + s.ctx
        cached = min(s.cached, prompt) if s.cache_model == spec.model else 0
        if spec.provider == "anthropic":
            inp = min(prompt, rng.randint(1, 12))
            cr = min(cached, prompt - inp)
            cw = prompt - inp - cr
        else:
            cr = (cached // 128) * 128 if cached >= 1024 and (spec.provider == "openai" or rng.random() < 0.8) else 0
            inp, cw = prompt - cr, 0
        total = inp + output + cr + cw
        extra: dict[str, Any] = {}
        if self.pi16 and any(isinstance(b, ThinkingContent) for b in blocks):
            extra["reasoning"] = rng.randint(1, max(1, output // 2))
        if self.pi16 and cw and rng.random() < 0.2:  # part of the cache written for an hour
            extra["cache_write_1h"] = rng.randint(0, cw)
        usage = Usage(input=inp, output=output, cache_read=cr, cache_write=cw, total_tokens=total,
                      cost=_cost(spec, inp, output, cr, cw), **extra)
        self.clock = start + int(output * rng.uniform(8, 30)) + rng.randint(200, 3000)
        more: dict[str, Any] = {}
        if self.pi16:
            more["thinking_level"] = self.thinking
            if spec.provider == "openai":
                more["response_id"] = f"resp_{rng.getrandbits(96):024x}"
                if rng.random() < 0.3:  # the provider answered with a dated snapshot of the model
                    more["response_model"] = f"{spec.model}-2026-01-{rng.randint(10, 28)}"
        msg = AssistantMessage(content=blocks, api=spec.api, provider=spec.provider, model=spec.model,
                               usage=usage, stop_reason=stop, timestamp=start, **more)
        eid = self.append_message(msg, role=f"assistant:{stop}", valid_usage=total)
        st = self.state[eid]
        # the next call can read everything this one was sent plus its answer from the cache
        self.state[eid] = _State(st.ctx, st.usage_total, 0, self.system_tokens + st.ctx, spec.model, st.compaction)
        return eid

    def failed(self, stop: str) -> str:
        rng, spec = self.rng, self.model
        start = self.tick(300, 4000)
        blocks: tuple = ()
        if stop == "aborted" and rng.random() < 0.5:
            blocks = (TextContent(text=prose(rng, "say", 1, self.proj)[: rng.randint(5, 60)]),)
        err = "Request was aborted" if stop == "aborted" else rng.choice(_ERRORS)
        self.clock = start + rng.randint(100, 20000)
        msg = AssistantMessage(content=blocks, api=spec.api, provider=spec.provider, model=spec.model,
                               usage=_ZERO_USAGE, stop_reason=stop, timestamp=start, error_message=err)
        eid = self.append_message(msg, role=f"assistant:{stop}")
        if self.pi16 and rng.random() < 0.5:  # pi 1.6 can take a failed attempt out of the context
            self.context_edit(eid, None)
        return eid

    def turn(self, *, tool_rounds: float, first: bool = False) -> None:
        rng = self.rng
        self.user(first=first)
        thinking_on = self.thinking != "off"
        while True:
            r = rng.random()
            if r < 0.012:
                self.failed("aborted")
                return
            if r < 0.017:
                self.failed("error")
                return
            blocks: list = []
            if thinking_on and rng.random() < 0.75:
                blocks.append(self._thinking_block())
            if rng.random() < 1 / (1 + tool_rounds):
                n = rng.choice((2, 3, 5, 8, 14))
                blocks.append(TextContent(text=prose(rng, "say", n, self.proj)))
                self.assistant(tuple(blocks), "stop")
                return
            if rng.random() < 0.5:
                blocks.append(TextContent(text=prose(rng, "say", 1, self.proj)))
            tools = [self._tool() for _ in range(rng.choice((1, 1, 1, 2, 3)))]
            blocks.extend(t[0] for t in tools)
            aid = self.assistant(tuple(blocks), "toolUse")
            self.fileops[aid] = (tuple(t[2] for t in tools if t[2]), tuple(t[3] for t in tools if t[3]))
            for _, result, _, _ in tools:
                ts = self.tick(20, 30_000 if result.tool_name == "bash" else 800)
                self.append_message(_with_ts(result, ts))

    # -- tree moves ----------------------------------------------------------------------------

    def branch(self, *, summary: bool, label: str | None) -> bool:
        """Move the leaf back to a turn end (or before a user message) on the current path."""
        rng = self.rng
        path = self.path(self.leaf)
        lo = max(3, int(len(path) * 0.3))
        targets = [i for i in range(lo, len(path) - 2)
                   if self.kind.get(path[i]) in ("user", "assistant:stop")]
        if not targets:
            return False
        target = path[rng.choice(targets)]
        new_leaf = self.parent[target] if self.kind[target] == "user" else target
        old_leaf = self.leaf
        self._restore_settings(new_leaf)
        self.tick(5_000, 120_000)
        if summary:
            ancestors = set(self.path(new_leaf))
            left = [e for e in self.path(old_leaf) if e not in ancestors]
            reads, mods = self._file_lists(left, None)
            goal = prose(rng, "ask", 1, self.proj)
            text = (_BRANCH_PREAMBLE + f"## Goal\n{goal}\n\n## Progress\n"
                    f"{prose(rng, 'done', rng.randint(1, 4), self.proj)}"
                    + format_file_operations(reads, mods))
            est = math.ceil(len(text) / CHARS_PER_TOKEN)
            s = self.state[new_leaf]  # type: ignore[index]
            st = _State(s.ctx + est, s.usage_total, s.trailing + est, s.cached, s.cache_model, s.compaction)
            details = {"readFiles": reads, "modifiedFiles": mods}
            usage = (self.summary_usage(sum(self.est.get(e, 0) for e in left), est) if self.pi16 else None)
            self.append(lambda i, p, t: BranchSummaryEntry(id=i, parent_id=p, timestamp=t, from_id=p or "root",
                                                           summary=text, details=details, usage=usage,
                                                           from_hook=False),
                        st, parent=new_leaf)
            if label:
                self.label(self.leaf, label)  # type: ignore[arg-type]
        else:
            self.leaf = new_leaf
            if label:
                self.label(target, label)
        return True

    def _restore_settings(self, leaf: str | None) -> None:
        """Model and thinking level in effect at ``leaf`` (as pi's buildSessionContext finds them)."""
        found: dict[str, str] = {}
        node = leaf
        while node is not None and len(found) < 2:
            kv = self.settings.get(node)
            if kv is not None and kv[0] not in found:
                found[kv[0]] = kv[1]
            node = self.parent[node]
        self.model = MODELS[found.get("model", self.model.model)]
        self.thinking = found.get("thinking", "off")

    def _file_lists(self, ids: Sequence[str], previous: str | None) -> tuple[list[str], list[str]]:
        reads: set[str] = set()
        mods: set[str] = set()
        if previous is not None:
            d = self.comp_details[previous]
            reads.update(d["readFiles"])
            mods.update(d["modifiedFiles"])
        for e in ids:
            ops = self.fileops.get(e)
            if ops:
                reads.update(ops[0])
                mods.update(ops[1])
        return sorted(reads - mods), sorted(mods)

    def maybe_compact(self) -> bool:
        """pi's threshold check after a turn; compacts (keeping recent turns) when over it."""
        s = self.cur()
        reserve = min(_RESERVE_TOKENS, self.window // 4)
        context = (s.usage_total or 0) + s.trailing
        if context <= self.window - reserve:
            return False
        keep = min(_KEEP_RECENT_TOKENS, self.window // 5)
        path = self.path(self.leaf, s.compaction)
        acc = 0
        i = len(path)
        while i > 0 and acc < keep:
            i -= 1
            acc += self.est.get(path[i], 0)
        users = [k for k in range(max(i, 1), len(path)) if self.kind.get(path[k]) == "user"]
        if not users:
            users = [k for k in range(1, len(path)) if self.kind.get(path[k]) == "user"][-1:]
        if not users:
            return False
        cut = users[0]
        first_kept = path[cut]
        reads, mods = self._file_lists(path[:cut], s.compaction)
        rng = self.rng
        text = (f"## Goal\n{prose(rng, 'ask', rng.randint(1, 3), self.proj)}\n\n## Constraints & Preferences\n"
                f"- Keep the public API unchanged\n\n## Progress\n### Done\n"
                f"{prose(rng, 'done', rng.randint(2, 8), self.proj)}"
                f"\n\n### In Progress\n- [ ] {prose(rng, 'ask', 1, self.proj)}\n\n## Key Decisions\n"
                f"- **{rng.choice(self.proj.symbols)}**: {prose(rng, 'say', 2, self.proj)}\n\n## Next Steps\n"
                f"1. {prose(rng, 'ask', 1, self.proj)}\n\n## Critical Context\n{prose(rng, 'think', 3, self.proj)}"
                + format_file_operations(reads, mods))
        est = math.ceil(len(text) / CHARS_PER_TOKEN)
        # what the kept messages weigh now (a context edit after them changed their estimate)
        kept = sum(self.est.get(e, 0) for e in path[cut:] if e not in self.excluded)
        details = {"readFiles": reads, "modifiedFiles": mods}
        self.tick(20_000, 90_000)
        st = _State(est + kept, None, est, self.system_tokens, self.model.model, None)
        usage = self.summary_usage(context - kept, est) if self.pi16 else None

        def make(i: str, p: str | None, t: str) -> CompactionEntry:
            system = None
            if self.system is not None:  # pi 1.6 replays the system message in effect
                system = SystemMessage(content=self.system.content, sections=self.system.sections,
                                       tools_added=self.system.tools_added, timestamp=self.clock)
            return CompactionEntry(id=i, parent_id=p, timestamp=t, summary=text, first_kept_entry_id=first_kept,
                                   tokens_before=context, details=details, usage=usage, from_hook=False,
                                   system_message=system)

        cid = self.append(make, st)
        self.state[cid] = _State(st.ctx, None, est, st.cached, st.cache_model, cid)
        self.comp_details[cid] = details
        return True


def _with_ts(m: ToolResultMessage, ts: int) -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=m.tool_call_id, tool_name=m.tool_name, content=m.content,
                             details=m.details, is_error=m.is_error, timestamp=ts)
