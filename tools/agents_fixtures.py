"""Writes the generated fixtures of the agents read through the agent seam under
``tests/data/agents/<agent>/home/``, as the agents lay them out: the SQLite stores of Kilo
(``kilo.db``) and Hermes (``state.db``) and OpenClaw's session files (Droid's settings files are
written by hand). Run from the repository root, then ``tools/ccusage_agents.sh`` for ccusage's
reports on them:

    python tools/agents_fixtures.py
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "tests" / "data" / "agents"

KILO_SCHEMA = """
CREATE TABLE project (id TEXT PRIMARY KEY, worktree TEXT NOT NULL, vcs TEXT, name TEXT,
  time_created INTEGER NOT NULL DEFAULT 0, time_updated INTEGER NOT NULL DEFAULT 0);
CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT, slug TEXT NOT NULL DEFAULT '',
  directory TEXT NOT NULL DEFAULT '', title TEXT NOT NULL DEFAULT '', version TEXT NOT NULL DEFAULT '',
  time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL);
CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
  time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
  time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE INDEX message_session_idx ON message (session_id);
CREATE INDEX part_message_idx ON part (message_id);
"""

T0 = 1777975200000  # 2026-05-05T10:00:00Z


def _kilo_messages() -> list[tuple]:
    """(session, message id, ms offset, data, parts) in write order."""
    ses_a, ses_b, ses_c = "ses_5a1f0c2e9ffeK1lo0a", "ses_5a1f0c2e9ffeK1lo0b", "ses_5a1f0c2e9ffeK1lo0c"
    cwd = "/home/dev/shop"
    tok = lambda i, o, r, cr, cw: {"input": i, "output": o, "reasoning": r, "cache": {"read": cr, "write": cw}}  # noqa: E731

    def asst(parent, model, provider, created, tokens, cost=None, finish="stop", **extra):
        d = {"role": "assistant", "time": {"created": created, "completed": created + 4200}, "parentID": parent,
             "modelID": model, "providerID": provider, "mode": "code", "agent": "code",
             "path": {"cwd": cwd, "root": cwd}, "tokens": tokens, "finish": finish, **extra}
        if cost is not None:
            d["cost"] = cost
        return d

    def user(created, model="claude-sonnet-4-5", provider="anthropic"):
        return {"role": "user", "time": {"created": created}, "agent": "code",
                "model": {"providerID": provider, "modelID": model}}

    text = lambda s: {"type": "text", "text": s}  # noqa: E731
    tool = lambda name, status="completed": {"type": "tool", "callID": f"toolu_{name}", "tool": name,  # noqa: E731
                                             "state": {"status": status, "input": {"command": "npm test"},
                                                       "output": "ok" if status == "completed" else "",
                                                       **({"error": "exit 1"} if status == "error" else {})}}
    return [
        (ses_a, "msg_a01", 0, user(T0), [text("Add a discount field to the cart total.")]),
        (ses_a, "msg_a02", 5000, asst("msg_a01", "claude-sonnet-4-5", "anthropic", T0 + 5000,
                                      tok(3120, 842, 156, 18400, 9020), cost=0.0513, finish="tool-calls"),
         [{"type": "step-start"}, {"type": "reasoning", "text": "Look at cart.ts first."}, tool("read"),
          {"type": "step-finish", "reason": "tool-calls"}]),
        (ses_a, "msg_a03", 15000, asst("msg_a01", "claude-sonnet-4-5", "anthropic", T0 + 15000,
                                       tok(410, 1290, 0, 27420, 1650), cost=0.0348),
         [text("The cart total now applies the discount."), tool("bash", "error")]),
        # a subagent's child session (the task tool), on Kilo's gateway: recorded cost
        (ses_b, "msg_b01", 8000, user(T0 + 8000, "anthropic/claude-haiku-4.5", "kilo"), [text("Find the cart tests.")]),
        (ses_b, "msg_b02", 9000, asst("msg_b01", "anthropic/claude-haiku-4.5", "kilo", T0 + 9000,
                                      tok(1540, 310, 0, 6400, 2200), cost=0.00557), [text("tests/cart.test.ts")]),
        # a request that failed: an error, no tokens
        (ses_a, "msg_a04", 60000, user(T0 + 60000), [text("Now the checkout page.")]),
        (ses_a, "msg_a05", 61000, asst("msg_a04", "claude-sonnet-4-5", "anthropic", T0 + 61000, tok(0, 0, 0, 0, 0),
                                       cost=0, finish="error",
                                       error={"name": "APIError", "data": {"message": "Overloaded"}}), []),
        # next day (UTC): a GitHub Copilot model, which Kilo records at zero cost; one without a cost
        # field; one with only a total
        (ses_c, "msg_c01", 86400000, user(T0 + 86400000, "gpt-5", "github-copilot"), [text("Explain the build.")]),
        (ses_c, "msg_c02", 86405000, asst("msg_c01", "gpt-5", "github-copilot", T0 + 86405000,
                                          tok(8200, 640, 320, 0, 0), cost=0), [text("It uses vite.")]),
        (ses_c, "msg_c03", 86420000, user(T0 + 86420000, "gpt-5", "openai"), [text("And the tests?")]),
        (ses_c, "msg_c04", 86425000, asst("msg_c03", "gpt-5", "openai", T0 + 86425000, tok(2100, 900, 400, 8192, 0)),
         [text("vitest.")]),
        (ses_c, "msg_c05", 86440000, asst("msg_c03", "gpt-5", "openai", T0 + 86440000, {"total": 1800}),
         [text("Done.")]),
    ]


def kilo() -> None:
    db = ROOT / "kilo" / "home" / ".local" / "share" / "kilo" / "kilo.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    db.unlink(missing_ok=True)
    con = sqlite3.connect(db)
    con.executescript(KILO_SCHEMA)
    con.execute("INSERT INTO project VALUES ('prj_shop', '/home/dev/shop', 'git', 'shop', ?, ?)", (T0, T0))
    sessions = [("ses_5a1f0c2e9ffeK1lo0a", None, "/home/dev/shop", "Cart discount", 0),
                ("ses_5a1f0c2e9ffeK1lo0b", "ses_5a1f0c2e9ffeK1lo0a", "/home/dev/shop", "Find the cart tests (@explore)",
                 8000),
                ("ses_5a1f0c2e9ffeK1lo0c", None, "", "Explain the build", 86400000)]
    for sid, parent, cwd, title, at in sessions:
        con.execute("INSERT INTO session VALUES (?, 'prj_shop', ?, ?, ?, ?, '7.0.12', ?, ?)",
                    (sid, parent, title.lower().replace(" ", "-")[:20], cwd, title, T0 + at, T0 + at))
    for sid, mid, at, data, parts in _kilo_messages():
        con.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (mid, sid, T0 + at, T0 + at, json.dumps(data)))
        for j, p in enumerate(parts):
            con.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                        (f"prt_{mid[4:]}_{j}", mid, sid, T0 + at + j, T0 + at + j, json.dumps(p)))
    con.commit()
    con.execute("VACUUM")
    con.close()


HERMES_SCHEMA = """
CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT, model TEXT, model_config TEXT,
  system_prompt TEXT, parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL, end_reason TEXT,
  message_count INTEGER DEFAULT 0, tool_call_count INTEGER DEFAULT 0, input_tokens INTEGER DEFAULT 0,
  output_tokens INTEGER DEFAULT 0, cache_read_tokens INTEGER DEFAULT 0, cache_write_tokens INTEGER DEFAULT 0,
  reasoning_tokens INTEGER DEFAULT 0, billing_provider TEXT, billing_base_url TEXT, billing_mode TEXT,
  estimated_cost_usd REAL, actual_cost_usd REAL, cost_status TEXT, cost_source TEXT, pricing_version TEXT,
  title TEXT, api_call_count INTEGER DEFAULT 0);
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, role TEXT NOT NULL,
  content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT, timestamp REAL NOT NULL, token_count INTEGER,
  finish_reason TEXT, reasoning TEXT, reasoning_content TEXT, reasoning_details TEXT, codex_reasoning_items TEXT,
  codex_message_items TEXT);
CREATE INDEX idx_messages_session ON messages(session_id, timestamp);
"""

H0 = 1778140800.0  # 2026-05-07T08:00:00Z


def _hermes_sessions() -> list[dict]:
    base = {"user_id": None, "model_config": None, "system_prompt": None, "parent_session_id": None,
            "ended_at": None, "end_reason": None, "billing_base_url": None, "billing_mode": None,
            "estimated_cost_usd": None, "actual_cost_usd": None, "cost_status": None, "cost_source": None,
            "pricing_version": None, "reasoning_tokens": 0, "cache_write_tokens": 0}
    return [{**base, **d} for d in (
        # metered through Anthropic: the actual cost Hermes recorded
        {"id": "20260507_080000_a1b2c3", "source": "cli", "model": "claude-sonnet-4-5", "started_at": H0 + 0.412,
         "ended_at": H0 + 3000, "end_reason": "compression", "message_count": 4, "tool_call_count": 1,
         "input_tokens": 48210, "output_tokens": 6120, "cache_read_tokens": 181400, "cache_write_tokens": 22050,
         "billing_provider": "anthropic", "billing_mode": "metered", "estimated_cost_usd": 0.4012,
         "actual_cost_usd": 0.4105, "cost_status": "actual", "cost_source": "provider", "title": "Refactor the CLI",
         "api_call_count": 7},
        # its continuation after compression, the next day (UTC): an estimated cost only
        {"id": "20260508_003000_d4e5f6", "source": "cli", "model": "claude-sonnet-4-5",
         "parent_session_id": "20260507_080000_a1b2c3", "started_at": H0 + 59400.0, "ended_at": H0 + 60600,
         "end_reason": "user_exit", "message_count": 2, "input_tokens": 9100, "output_tokens": 1450,
         "cache_read_tokens": 30200, "cache_write_tokens": 4100, "billing_provider": "anthropic",
         "estimated_cost_usd": 0.0691, "cost_status": "estimated", "cost_source": "hermes", "api_call_count": 2},
        # a ChatGPT subscription (openai-codex): a zero cost, priced from the tokens
        {"id": "20260508_091500_0a9b8c", "source": "telegram", "model": "gpt-5", "started_at": H0 + 90900.5,
         "message_count": 2, "input_tokens": 61000, "output_tokens": 4200, "cache_read_tokens": 150000,
         "reasoning_tokens": 1800, "billing_provider": "openai-codex", "billing_mode": "subscription_included",
         "estimated_cost_usd": 0.0, "actual_cost_usd": 0.0, "cost_status": "included", "title": "Weather bot",
         "api_call_count": 3},
        # a model no price table knows
        {"id": "20260508_120000_77aa11", "source": "discord", "model": "hermes-4-405b", "started_at": H0 + 100800.0,
         "message_count": 2, "input_tokens": 5200, "output_tokens": 800, "billing_provider": "nous",
         "api_call_count": 1},
        # no model call yet, and a session without usage
        {"id": "20260508_130000_000000", "source": "cron", "model": None, "started_at": H0 + 104400.0},
        {"id": "20260508_131000_111111", "source": "cli", "model": "gpt-5", "started_at": H0 + 105000.0,
         "billing_provider": "openai"},
    )]


def _hermes_messages() -> list[tuple]:
    a, b, c, d = "20260507_080000_a1b2c3", "20260508_003000_d4e5f6", "20260508_091500_0a9b8c", "20260508_120000_77aa11"
    call = json.dumps([{"id": "call_1", "type": "function",
                        "function": {"name": "terminal", "arguments": json.dumps({"command": "pytest -q"})}}])
    return [
        (a, "user", "Split cli.py into a package.", None, None, None, H0 + 1, None, None),
        (a, "assistant", "", None, call, None, H0 + 5, "tool_calls", "Run the tests first."),
        (a, "tool", "12 passed", "call_1", None, "terminal", H0 + 9, None, None),
        (a, "assistant", "Done: cli/ with three modules.", None, None, None, H0 + 40, "stop", None),
        (b, "user", "Add a --version flag.", None, None, None, H0 + 59401, None, None),
        (b, "assistant", "Added.", None, None, None, H0 + 59420, "stop", None),
        (c, "user", "Weather in Lyon?", None, None, None, H0 + 90901, None, None),
        (c, "assistant", "Sunny, 21 C.", None, None, None, H0 + 90910, "stop", None),
        (d, "user", "Summarise the channel.", None, None, None, H0 + 100801, None, None),
        (d, "assistant", "", None, None, None, H0 + 100830, "error", None),
    ]


def hermes() -> None:
    db = ROOT / "hermes" / "home" / ".hermes" / "state.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    db.unlink(missing_ok=True)
    con = sqlite3.connect(db)
    con.executescript(HERMES_SCHEMA)
    for s in _hermes_sessions():
        cols = ", ".join(s)
        con.execute(f"INSERT INTO sessions ({cols}) VALUES ({', '.join('?' * len(s))})", list(s.values()))
    con.executemany("INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp, "
                    "finish_reason, reasoning) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", _hermes_messages())
    con.commit()
    con.execute("VACUUM")
    con.close()


def _pi_line(kind: str, at: str, **fields) -> str:
    return json.dumps({"type": kind, **fields, "timestamp": at}, separators=(",", ":"))


def _usage(inp: int, out: int, cr: int, cw: int, rates: tuple | None) -> dict:
    u: dict = {"input": inp, "output": out, "cacheRead": cr, "cacheWrite": cw, "totalTokens": inp + out + cr + cw}
    if rates is not None:  # pi's cost of the usage, at the model's rates (per million)
        parts = {k: n * r / 1e6 for k, n, r in zip(("input", "output", "cacheRead", "cacheWrite"), (inp, out, cr, cw),
                                                      rates)}
        u["cost"] = {**parts, "total": sum(parts.values())}
    return u


def _openclaw_session(sid: str, start: str, cwd: str, turns: list[tuple]) -> str:
    """A pi v3 session file as OpenClaw writes it: header, model snapshot, then (time, kind, data)."""
    lines = [_pi_line("session", start, version=3, id=sid, cwd=cwd)]
    parent = None
    for k, (at, kind, data) in enumerate(turns):
        eid = f"{sid[:4]}{k:04x}"
        ms = int(__import__("datetime").datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp() * 1000)
        if kind == "model":
            lines.append(_pi_line("model_change", at, id=eid, parentId=parent, provider=data[0], modelId=data[1]))
        elif kind == "snapshot":
            lines.append(_pi_line("custom", at, id=eid, parentId=parent, customType="model-snapshot",
                                  data={"provider": data[0], "modelId": data[1]}))
        elif kind == "user":
            lines.append(_pi_line("message", at, id=eid, parentId=parent, message={
                "role": "user", "content": [{"type": "text", "text": data}], "timestamp": ms}))
        elif kind == "tool":
            lines.append(_pi_line("message", at, id=eid, parentId=parent, message={
                "role": "toolResult", "toolCallId": data[0], "toolName": data[1],
                "content": [{"type": "text", "text": data[2]}], "isError": False, "timestamp": ms}))
        else:  # assistant: (provider, model, api, content, usage, stop)
            provider, model, api, content, usage, stop = data
            msg = {"role": "assistant", "content": content, "api": api, "provider": provider, "model": model,
                   "usage": usage, "stopReason": stop, "timestamp": ms}
            if stop == "error":
                msg["errorMessage"] = "429 rate_limit_error"
            lines.append(_pi_line("message", at, id=eid, parentId=parent, message=msg))
        parent = eid
    return "\n".join(lines) + "\n"


SONNET, HAIKU, GPT52 = (3, 15, 0.3, 3.75), (1, 5, 0.1, 1.25), (1.75, 14, 0.175, 1.75)


def openclaw() -> None:
    home = ROOT / "openclaw" / "home" / ".openclaw" / "agents"
    text = lambda s: [{"type": "text", "text": s}]  # noqa: E731
    call = lambda i, name, args: [{"type": "toolCall", "id": i, "name": name, "arguments": args}]  # noqa: E731
    sonnet = ("anthropic", "claude-sonnet-4-5", "anthropic-messages")
    files = {
        # the main agent's chat: Anthropic, pi's recorded costs; a tool round; a rate-limited retry
        "main/sessions/6f1c2a40-8d7e-4b1a-9c3d-0e5f7a9b1c01.jsonl": _openclaw_session(
            "6f1c2a40-8d7e-4b1a-9c3d-0e5f7a9b1c01", "2026-05-10T07:59:58.000Z", "/home/dev/.openclaw/workspace", [
                ("2026-05-10T07:59:58.500Z", "snapshot", ("anthropic", "claude-sonnet-4-5")),
                ("2026-05-10T08:00:00.000Z", "user", "What is on my calendar today?"),
                ("2026-05-10T08:00:04.210Z", "assistant", (*sonnet, call("toolu_01", "calendar", {"day": "today"}),
                                                            _usage(5210, 188, 0, 14120, SONNET), "toolUse")),
                ("2026-05-10T08:00:05.000Z", "tool", ("toolu_01", "calendar", "09:30 standup; 14:00 dentist")),
                ("2026-05-10T08:00:07.900Z", "assistant", (*sonnet, text("Standup at 09:30, dentist at 14:00."),
                                                            _usage(96, 41, 14120, 5310, SONNET), "stop")),
                ("2026-05-10T08:10:00.000Z", "user", "Move the dentist to Friday."),
                ("2026-05-10T08:10:01.000Z", "assistant", (*sonnet, [], _usage(0, 0, 0, 0, SONNET), "error")),
                ("2026-05-10T08:10:09.400Z", "assistant", (*sonnet, text("Moved to Friday 14:00."),
                                                            _usage(412, 76, 19430, 0, SONNET), "stop")),
            ]),
        # a model switch to a ChatGPT subscription (openai-codex): pi records a zero cost; past midnight
        "main/sessions/6f1c2a40-8d7e-4b1a-9c3d-0e5f7a9b1c02.jsonl": _openclaw_session(
            "6f1c2a40-8d7e-4b1a-9c3d-0e5f7a9b1c02", "2026-05-10T23:58:00.000Z", "/home/dev/.openclaw/workspace", [
                ("2026-05-10T23:58:00.100Z", "model", ("openai-codex", "gpt-5.2")),
                ("2026-05-10T23:58:02.000Z", "user", "Summarise today's mail."),
                ("2026-05-10T23:59:30.000Z", "assistant", ("openai-codex", "gpt-5.2", "openai-codex-responses",
                                                            text("Three invoices and a newsletter."),
                                                            _usage(20480, 512, 0, 0, (0, 0, 0, 0)), "stop")),
                ("2026-05-11T00:01:10.000Z", "user", "Reply to the first invoice."),
                ("2026-05-11T00:01:40.000Z", "assistant", ("openai-codex", "gpt-5.2", "openai-codex-responses",
                                                            text("Drafted."), _usage(1210, 330, 19968, 0, (0, 0, 0, 0)),
                                                            "stop")),
            ]),
        # another agent's session, deleted in OpenClaw (kept as .deleted.<time>); usage without a cost
        "work/sessions/0b7d9e22-51c3-4f08-a6b4-2d8e0f1a3c05.jsonl.deleted.2026-05-12T09-00-00.000Z":
            _openclaw_session("0b7d9e22-51c3-4f08-a6b4-2d8e0f1a3c05", "2026-05-11T15:00:00.000Z", "/home/dev/work", [
                ("2026-05-11T15:00:00.500Z", "model", ("anthropic", "claude-haiku-4-5")),
                ("2026-05-11T15:00:01.000Z", "user", "Lint the repo."),
                ("2026-05-11T15:00:06.000Z", "assistant", ("anthropic", "claude-haiku-4-5", "anthropic-messages",
                                                            text("Two warnings."), _usage(3300, 120, 0, 2100, None),
                                                            "stop")),
            ]),
    }
    for rel, body in files.items():
        path = home / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)


def _grok_update(at: int, sid: str, update: dict, xai: bool = True) -> str:
    return json.dumps({"timestamp": at, "method": "_x.ai/session/update" if xai else "session/update",
                       "params": {"sessionId": sid, "update": update}}, separators=(",", ":"))


def _grok_usage(inp: int, out: int, cr: int, cw: int, reason: int, calls: int, ticks: int | None = None,
                **extra) -> dict:
    u = {"inputTokens": inp, "outputTokens": out, "totalTokens": inp + out, "cachedReadTokens": cr,
         "cacheCreationTokens": cw, "reasoningTokens": reason, "modelCalls": calls, "apiDurationMs": 1500 * calls}
    if ticks is not None:
        u["costUsdTicks"] = ticks
    return {**u, **extra}


def grok() -> None:
    root = ROOT / "grok" / "home" / ".grok" / "sessions"
    a, b = "019f7000-0000-7000-8000-000000000001", "019f7000-0000-7000-8000-000000000002"
    t = 1778576400  # 2026-05-12T09:00:00Z
    chunk = lambda at, sid, kind, text: _grok_update(at, sid, {  # noqa: E731
        "sessionUpdate": kind, "content": {"type": "text", "text": text}}, xai=False)
    done = lambda at, sid, pid, usage: _grok_update(at, sid, {  # noqa: E731
        "sessionUpdate": "turn_completed", "prompt_id": pid, "stop_reason": "end_turn", "usage": usage})
    # a session with per-model usage, a subagent model in one turn, a turn written twice, a bill
    # without cost ticks (partial: scrubbed)
    t1 = _grok_usage(50000, 2000, 30000, 0, 800, 3, 1_000_000_000)
    t3a = _grok_usage(30000, 2000, 15000, 5000, 1000, 2)
    t3b = _grok_usage(10000, 1000, 5000, 0, 0, 2)
    t3 = _grok_usage(40000, 3000, 20000, 5000, 1000, 4, costIsPartial=True)
    lines_a = [
        chunk(t, a, "user_message_chunk", "Add rate limiting to the API."),
        chunk(t + 20, a, "agent_message_chunk", "Adding a token bucket."),
        done(t + 60, a, "p-1", {**t1, "modelUsage": {"grok-4": t1}, "numTurns": 3}),
        done(t + 60, a, "p-1", {**t1, "modelUsage": {"grok-4": t1}, "numTurns": 3}),
        chunk(t + 590, a, "user_message_chunk", "Now the tests."),
        done(t + 1200, a, "p-3", {**t3, "modelUsage": {"grok-4": {**t3a, "costIsPartial": True},
                                                        "grok-code-fast-1": {**t3b, "costIsPartial": True}}}),
    ]
    # the next day: a turn whose usage names no model (the session's current model counts)
    t2 = _grok_usage(10000, 500, 0, 0, 0, 1)
    lines_b = [chunk(t + 86400, b, "user_message_chunk", "Explain the retry logic."),
               done(t + 86460, b, "p-1", t2)]
    for sid, cwd, title, lines, model in ((a, "/home/dev/api", "Rate limiting for the API", lines_a, "grok-4"),
                                          (b, "/home/dev/api", None, lines_b, "grok-4")):
        folder = root / "%2Fhome%2Fdev%2Fapi" / sid
        folder.mkdir(parents=True, exist_ok=True)
        summary = {"info": {"id": sid, "cwd": cwd}, "session_summary": lines[0].split('"text":"')[1].split('"')[0],
                   "created_at": "2026-05-12T09:00:00Z", "updated_at": "2026-05-12T09:20:00Z",
                   "num_messages": len(lines), "num_chat_messages": 2, "current_model_id": model,
                   "next_trace_turn": 0, "chat_format_version": 1, "agent_name": "grok-build"}
        if title:
            summary["generated_title"] = title
        (folder / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        (folder / "updates.jsonl").write_text("\n".join(lines) + "\n")
        (folder / "chat_history.jsonl").write_text("\n".join(json.dumps(x) for x in (
            {"type": "system", "content": "You are Grok"},
            {"type": "user", "content": [{"type": "text", "text": summary["session_summary"]}], "prompt_index": 0},
            {"type": "assistant", "content": "Done.", "model_id": model})) + "\n")


if __name__ == "__main__":
    kilo()
    hermes()
    openclaw()
    grok()
