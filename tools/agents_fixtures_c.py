"""Writes the generated fixtures of Copilot CLI and Goose under ``tests/data/agents/<agent>/home/``,
as the agents lay them out: Copilot CLI's OpenTelemetry file export (``~/.copilot/otel/*.jsonl``,
spans and log records as the OpenTelemetry JS SDK's file exporter writes them) and Goose's SQLite
store (``~/.local/share/goose/sessions/sessions.db``, schema version 15). Run from the repository
root, then ``tools/ccusage_agents.sh copilot goose`` for ccusage's reports on them:

    python tools/agents_fixtures_c.py
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "tests" / "data" / "agents"

# -- Copilot CLI ------------------------------------------------------------------------------------

C1, C2, C3 = ("4f2a9c1e-7b3d-4e8a-9f10-2c6d8e0a1b01", "4f2a9c1e-7b3d-4e8a-9f10-2c6d8e0a1b02",
              "4f2a9c1e-7b3d-4e8a-9f10-2c6d8e0a1b03")
_RES = {"service.name": "github-copilot-cli", "service.version": "0.0.354"}


def _hr(s: int, ms: int = 0) -> list[int]:
    return [s, ms * 1_000_000]


def _span(trace: str, span: str, parent: str | None, name: str, start: list, end: list, attrs: dict) -> dict:
    return {"type": "span", "traceId": trace, "spanId": span, "parentSpanId": parent, "name": name,
            "kind": 1 if name.startswith("chat ") else 0, "startTime": start, "endTime": end,
            "duration": [end[0] - start[0], 0], "status": {"code": 1}, "resource": _RES, "attributes": attrs}


def _log(trace: str, span: str, at: list, attrs: dict, body: str) -> dict:
    return {"type": "log", "hrTime": at, "hrTimeObserved": at, "spanContext": {"traceId": trace, "spanId": span,
            "traceFlags": 1}, "severityNumber": 9, "severityText": "INFO", "body": body, "resource": _RES,
            "attributes": attrs}


def _usage(inp: int, out: int, cache_read: int = 0, cache_write: int = 0, reasoning: int = 0) -> dict:
    u = {"gen_ai.usage.input_tokens": inp, "gen_ai.usage.output_tokens": out}
    if cache_read:
        u["gen_ai.usage.cache_read.input_tokens"] = cache_read
    if cache_write:
        u["gen_ai.usage.cache_creation.input_tokens"] = cache_write
    if reasoning:
        u["gen_ai.usage.reasoning.output_tokens"] = reasoning
    return u


def _chat(conv: str, model: str, resp: str, usage: dict, finish: str = "tool_calls") -> dict:
    return {"gen_ai.operation.name": "chat", "gen_ai.system": "github_copilot", "gen_ai.request.model": model,
            "gen_ai.response.model": model, "gen_ai.conversation.id": conv, "gen_ai.response.id": resp,
            "gen_ai.response.finish_reasons": [finish], **usage}


def _tool(conv: str, name: str, call: str) -> dict:
    return {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, "gen_ai.tool.call.id": call,
            "gen_ai.conversation.id": conv}


def _agent(conv: str, model: str, usage: dict) -> dict:
    return {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "GitHub Copilot CLI",
            "gen_ai.request.model": model, "gen_ai.conversation.id": conv, **usage}


def _copilot_first() -> list[dict]:
    """2026-05-12: session C1 (two chat spans, a tool span, the agent span with the turn's totals and
    the inference logs of the same responses: counted once, from the chat spans) and session C2 (an
    older export: inference logs only, one without a model, which its trace's agent span names)."""
    t1, t2, t3 = "8c1d" * 8, "8c2e" * 8, "8c3f" * 8
    s = 1778577300  # 2026-05-12T09:15:00Z
    sonnet = "claude-sonnet-4"
    u1, u2 = _usage(24610, 412, 20480, 3890), _usage(29320, 1280, 24370, 0, 0)
    u3 = _usage(31020, 655, 29100)
    return [
        {"type": "metric", "name": "gen_ai.client.token.usage", "resource": _RES},
        _span(t1, "a1000001", "root0001", f"chat {sonnet}", _hr(s + 2), _hr(s + 6, 410),
              _chat(C1, sonnet, "msg_01A", u1)),
        _log(t1, "a1000001", _hr(s + 6, 412), {"event.name": "gen_ai.client.inference.operation.details",
                                              "gen_ai.response.model": sonnet, "gen_ai.response.id": "msg_01A",
                                              "gen_ai.conversation.id": C1, **u1}, "GenAI inference: " + sonnet),
        _span(t1, "a1000002", "root0001", "execute_tool view", _hr(s + 6, 500), _hr(s + 7, 20),
              _tool(C1, "view", "toolu_01")),
        _span(t1, "a1000003", "root0001", f"chat {sonnet}", _hr(s + 7, 100), _hr(s + 15, 873),
              _chat(C1, sonnet, "msg_01B", u2)),
        _span(t1, "a1000004", "root0001", f"chat {sonnet}", _hr(s + 16), _hr(s + 19, 240),
              _chat(C1, sonnet, "msg_01C", u3, "stop")),
        _span(t1, "root0001", None, "invoke_agent GitHub Copilot CLI", _hr(s), _hr(s + 19, 300),
              _agent(C1, sonnet, _usage(84950, 2347, 73950, 3890))),
        # C2: the inference logs alone (no chat span of its trace); the agent span carries the totals
        _span(t2, "b2000000", None, "invoke_agent GitHub Copilot CLI", _hr(s + 3600), _hr(s + 3640),
              _agent(C2, "gpt-4.1", _usage(15500, 930, 8200))),
        _log(t2, "b2000001", _hr(s + 3610), {"event.name": "gen_ai.client.inference.operation.details",
                                            "gen_ai.response.model": "gpt-4.1", "gen_ai.response.id": "chatcmpl-2a",
                                            "gen_ai.conversation.id": C2, **_usage(7100, 410, 3200)},
             "GenAI inference: gpt-4.1"),
        _log(t2, "b2000002", _hr(s + 3638), {"event.name": "gen_ai.client.inference.operation.details",
                                            "gen_ai.response.id": "chatcmpl-2b",
                                            "gen_ai.conversation.id": C2, **_usage(8400, 520, 5000)},
             "GenAI inference"),
        # a chat span of C2 whose usage is a total alone (all output), in its own trace
        _span(t3, "c3000001", None, "chat gpt-4.1", _hr(s + 3650), _hr(s + 3652),
              {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4.1", "gen_ai.conversation.id": C2,
               "gen_ai.usage.total_tokens": 640}),
        # a chat span that failed before any usage: no call
        _span(t3, "c3000002", None, "chat gpt-4.1", _hr(s + 3653), _hr(s + 3654),
              {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4.1", "gen_ai.conversation.id": C2,
               "error.type": "rate_limited"}),
    ]


def _copilot_second() -> list[dict]:
    """2026-06-02: session C3 (gpt-5 with reasoning tokens), its first chat span near midnight UTC."""
    t4 = "9d4a" * 8
    s = 1780444790  # 2026-06-02T23:59:50Z
    return [
        _span(t4, "d4000001", "d4000000", "chat gpt-5", _hr(s), _hr(s + 8, 5),
              _chat(C3, "gpt-5", "resp_0d4a1", _usage(12040, 2210, 0, 0, 1536))),
        _span(t4, "d4000002", "d4000000", "chat gpt-5", _hr(s + 20), _hr(s + 31, 770),
              _chat(C3, "gpt-5", "resp_0d4a2", _usage(15880, 940, 11776, 0, 384), "stop")),
        _span(t4, "d4000000", None, "invoke_agent GitHub Copilot CLI", _hr(s - 1), _hr(s + 32),
              _agent(C3, "gpt-5", _usage(27920, 3150, 11776, 0, 1920))),
    ]


def copilot() -> None:
    folder = ROOT / "copilot" / "home" / ".copilot" / "otel"
    folder.mkdir(parents=True, exist_ok=True)
    for name, records in (("copilot-otel-20260512-091500.jsonl", _copilot_first()),
                          ("copilot-otel-20260602-235900.jsonl", _copilot_second())):
        text = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records)
        (folder / name).write_text(text)


# -- Goose ------------------------------------------------------------------------------------------

GOOSE_SCHEMA = """
CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP);
INSERT INTO schema_version (version, applied_at) VALUES (15, '2026-04-20 10:00:00');
CREATE TABLE sessions (id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '', description TEXT NOT NULL DEFAULT '',
  user_set_name BOOLEAN DEFAULT FALSE, session_type TEXT NOT NULL DEFAULT 'user', working_dir TEXT NOT NULL,
  created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
  extension_data TEXT DEFAULT '{}', total_tokens INTEGER, input_tokens INTEGER, output_tokens INTEGER,
  cache_read_tokens INTEGER, cache_write_tokens INTEGER, accumulated_total_tokens INTEGER,
  accumulated_input_tokens INTEGER, accumulated_output_tokens INTEGER, accumulated_cache_read_tokens INTEGER,
  accumulated_cache_write_tokens INTEGER, accumulated_cost REAL, schedule_id TEXT, recipe_json TEXT,
  user_recipe_values_json TEXT, provider_name TEXT, model_config_json TEXT,
  goose_mode TEXT NOT NULL DEFAULT 'auto', archived_at TIMESTAMP, project_id TEXT, parent_session_id TEXT);
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, message_id TEXT,
  session_id TEXT NOT NULL REFERENCES sessions(id), role TEXT NOT NULL, content_json TEXT NOT NULL,
  created_timestamp INTEGER NOT NULL, timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP, tokens INTEGER,
  metadata_json TEXT);
CREATE INDEX idx_messages_session ON messages(session_id);
CREATE TABLE usage_ledger (id INTEGER PRIMARY KEY AUTOINCREMENT,
  session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE, created_timestamp INTEGER NOT NULL,
  model TEXT, input_tokens INTEGER, output_tokens INTEGER, total_tokens INTEGER, cache_read_tokens INTEGER,
  cache_write_tokens INTEGER, cost REAL, cost_source TEXT, is_compaction INTEGER DEFAULT 0);
CREATE INDEX idx_usage_ledger_session ON usage_ledger(session_id);
"""

G = {k: f"20260514_{i}" for i, k in enumerate("abcdef", 1)}


def _model(name: str, limit: int) -> str:
    return json.dumps({"model_name": name, "context_limit": limit, "temperature": None, "max_tokens": None,
                       "toolshim": False, "toolshim_model": None, "fast_model": None})


def _goose_sessions() -> list[dict]:
    """The sessions rows; the running totals are the accumulated_* columns (the last request's counts
    are total_tokens, input_tokens, output_tokens)."""
    def s(sid, name, cwd, created, provider, model, acc, last=None, **more):
        row = {"id": sid, "name": name, "description": name, "working_dir": cwd, "created_at": created,
               "updated_at": created, "provider_name": provider, "model_config_json": model}
        if acc is not None:
            (row["accumulated_input_tokens"], row["accumulated_output_tokens"], row["accumulated_total_tokens"],
             row["accumulated_cache_read_tokens"], row["accumulated_cache_write_tokens"]) = acc
        if last is not None:
            row["input_tokens"], row["output_tokens"], row["total_tokens"] = last
        return {**row, **more}
    sonnet = _model("claude-sonnet-4-20250514", 200000)
    return [
        # a user session with a tool round; its totals count cached prompt tokens in the input
        s(G["a"], "Fix the flaky date test", "/home/dev/cal", "2026-05-14 08:02:11", "anthropic", sonnet,
          (96310, 3120, 99430, 61000, 4100), (38200, 1410, 39610), extension_data='{"todo.v0":{"content":""}}'),
        # a subagent it started (session_type sub_agent, parent_session_id)
        s(G["b"], "Read the failing test", "/home/dev/cal", "2026-05-14 08:04:40", "anthropic", sonnet,
          (18400, 640, 19040, 9000, 2200), (10100, 400, 10500), session_type="sub_agent",
          parent_session_id=G["a"]),
        # o4-mini: the total counts reasoning tokens beyond input and output
        s(G["c"], "Explain the retry loop", "/home/dev/api", "2026-05-14T21:40:05Z", "openai",
          _model("o4-mini", 200000), (22150, 1830, 27380, 0, 0), (12000, 900, 15500)),
        # an older row: no running totals, only the last request's counts
        s(G["d"], "Rename the config keys", "/home/dev/api", "2026-05-30 23:10:00", "openai",
          _model("gpt-4.1", 1047576), None, (8400, 1200, 9600)),
        # no model configured (a session that never reached a provider): no usage
        s(G["e"], "New session", "/home/dev", "2026-06-01 09:00:00", None, None, None),
        # June, Google's model; provider name with a dash
        s(G["f"], "Draft the release notes", "/home/dev/cal", "2026-06-03 14:22:09", "gcp-vertex-ai",
          _model("gemini-2.5-pro", 1048576), (40100, 2950, 43050, 0, 0), (21000, 1700, 22700)),
    ]


def _goose_messages() -> list[tuple]:
    """(message id, session, role, content parts, created seconds, metadata)."""
    vis = {"userVisible": True, "agentVisible": True}
    text = lambda t: {"type": "text", "text": t}  # noqa: E731
    req = lambda i, name, args: {"type": "toolRequest", "id": i, "toolCall": {  # noqa: E731
        "status": "success", "value": {"name": name, "arguments": args}}}
    res = lambda i, out: {"type": "toolResponse", "id": i, "toolResult": {  # noqa: E731
        "status": "success", "value": [{"type": "text", "text": out}]}}
    t = 1778745731  # 2026-05-14T08:02:11Z
    a, b, c, d, f = G["a"], G["b"], G["c"], G["d"], G["f"]
    return [
        ("msg_a1", a, "user", [text("The date test fails at midnight. Fix it.")], t + 1, vis),
        ("msg_a2", a, "assistant", [{"type": "thinking", "thinking": "Look at the test first.", "signature": "s"},
                                    text("I'll read the test."),
                                    req("toolu_a1", "developer__shell", {"command": "cat tests/test_date.py"})],
         t + 9, vis),
        ("msg_a3", a, "user", [res("toolu_a1", "def test_today(): ...")], t + 10, vis),
        ("msg_a4", a, "assistant", [req("toolu_a2", "dynamic_task__create_task", {"instructions": "Read it"})],
         t + 150, vis),
        ("msg_a5", a, "user", [{"type": "toolResponse", "id": "toolu_a2", "toolResult": {
            "status": "error", "error": "Subagent timed out"}}], t + 400, vis),
        ("msg_a6", a, "assistant", [text("Pinned the clock in the test; it passes now.")], t + 460, vis),
        ("msg_b1", b, "user", [text("Read tests/test_date.py and report what it asserts.")], t + 150, vis),
        ("msg_b2", b, "assistant", [text("It asserts today's date equals the local date.")], t + 170, vis),
        ("msg_c1", c, "user", [text("Explain the retry loop in client.py")], 1778794805, vis),
        ("msg_c2", c, "assistant", [text("It retries three times with exponential backoff.")], 1778794830, vis),
        ("msg_d1", d, "user", [text("Rename max_retry to max_retries everywhere")], 1780182600, vis),
        ("msg_d2", d, "assistant", [text("Renamed in 4 files.")], 1780182660, vis),
        ("msg_e1", G["e"], "user", [text("hello")], 1780304400, vis),
        ("msg_f1", f, "user", [text("Draft the release notes for 2.3")], 1780496529, vis),
        ("msg_f2", f, "assistant", [text("## 2.3\n- Faster sync")], 1780496580, vis),
    ]


def goose() -> None:
    db = ROOT / "goose" / "home" / ".local" / "share" / "goose" / "sessions" / "sessions.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    db.unlink(missing_ok=True)
    con = sqlite3.connect(db)
    con.executescript(GOOSE_SCHEMA)
    for s in _goose_sessions():
        con.execute(f"INSERT INTO sessions ({', '.join(s)}) VALUES ({', '.join('?' * len(s))})", list(s.values()))
    for mid, sid, role, parts, at, meta in _goose_messages():
        con.execute("INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp, timestamp, "
                    "metadata_json) VALUES (?, ?, ?, ?, ?, datetime(?, 'unixepoch'), ?)",
                    (mid, sid, role, json.dumps(parts), at, at, json.dumps(meta)))
    con.commit()
    con.execute("VACUUM")
    con.close()


if __name__ == "__main__":
    copilot()
    goose()
