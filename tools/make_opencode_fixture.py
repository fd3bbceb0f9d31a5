"""Writes the OpenCode fixture home, tests/data/agents/opencode/home/.local/share/opencode/.

OpenCode 1.x keeps its sessions in a SQLite database, ``opencode.db`` (tables ``project``,
``session``, ``message``, ``part``, a message's and a part's fields as JSON in ``data``); releases
before the database wrote the same records as JSON files under ``storage/`` (``session/<project>/
<session>.json``, ``message/<session>/<message>.json``, ``part/<message>/<part>.json``), which the
database's migration copied and left in place. The fixture has both: three sessions in the
database (one a subagent's child session, one through a provider that records no cost), one
session migrated (its JSON copy repeats the database's messages) and one only in the old storage.
Run from anywhere (the database is written anew):

    python tools/make_opencode_fixture.py
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "tests" / "data" / "agents" / "opencode" / "home" / ".local" / \
    "share" / "opencode"

SCHEMA = """
CREATE TABLE project (id TEXT PRIMARY KEY, worktree TEXT NOT NULL, vcs TEXT, name TEXT,
  time_created INTEGER NOT NULL DEFAULT 0, time_updated INTEGER NOT NULL DEFAULT 0);
CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT, slug TEXT NOT NULL DEFAULT '',
  directory TEXT NOT NULL DEFAULT '', title TEXT NOT NULL DEFAULT '', version TEXT NOT NULL DEFAULT '',
  share_url TEXT, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, time_compacting INTEGER,
  time_archived INTEGER, FOREIGN KEY (project_id) REFERENCES project(id));
CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
  time_updated INTEGER NOT NULL, data TEXT NOT NULL, FOREIGN KEY (session_id) REFERENCES session(id));
CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
  time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL,
  FOREIGN KEY (message_id) REFERENCES message(id));
CREATE INDEX message_session_time_created_id_idx ON message (session_id, time_created, id);
CREATE INDEX part_session_idx ON part (session_id);
CREATE INDEX part_message_id_id_idx ON part (message_id, id);
"""


def ms(text: str) -> int:
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC).timestamp() * 1000)


def user(mid: str, sid: str, at: str, text: str, model: tuple[str, str]) -> tuple[dict, list[dict]]:
    msg = {"id": mid, "sessionID": sid, "role": "user", "time": {"created": ms(at)}, "agent": "build",
           "model": {"providerID": model[0], "modelID": model[1]}}
    return msg, [{"id": f"prt_{mid[4:]}a", "sessionID": sid, "messageID": mid, "type": "text", "text": text}]


def assistant(mid: str, sid: str, parent: str, at: str, done: str, provider: str, model: str, cwd: str,
              tokens: dict, cost: float | None, parts: list[dict], **extra) -> tuple[dict, list[dict]]:
    msg = {"id": mid, "sessionID": sid, "role": "assistant", "time": {"created": ms(at), "completed": ms(done)},
           "parentID": parent, "modelID": model, "providerID": provider, "mode": "build", "agent": "build",
           "path": {"cwd": cwd, "root": cwd}, "tokens": tokens, "finish": "stop", **extra}
    if cost is not None:
        msg["cost"] = cost
    out = [{"id": f"prt_{mid[4:]}{k:02d}", "sessionID": sid, "messageID": mid, **p} for k, p in enumerate(parts)]
    return msg, out


def tool(name: str, call: str, inp: dict, output: str, at: str) -> dict:
    return {"type": "tool", "callID": call, "tool": name,
            "state": {"status": "completed", "input": inp, "output": output, "title": name, "metadata": {},
                      "time": {"start": ms(at), "end": ms(at) + 420}}}


def tok(inp: int, out: int, reasoning: int, read: int, write: int, total: bool = True) -> dict:
    t = {"input": inp, "output": out, "reasoning": reasoning, "cache": {"read": read, "write": write}}
    if total:
        t["total"] = inp + out + reasoning + read + write
    return t


SONNET, HAIKU = ("anthropic", "claude-sonnet-4-5"), ("anthropic", "claude-haiku-4-5")
CODEX = ("openai", "gpt-5.1-codex")
SHOP = "/home/dev/shop"

A = "ses_4f1a2b3c5ffeABCDEFGHIJ0001"
B = "ses_4f1a2b3c6ffeABCDEFGHIJ0002"
C = "ses_4f2b3c4d7ffeABCDEFGHIJ0003"
L = "ses_5a0b1c2d8ffeABCDEFGHIJ0004"

SESSIONS = [  # (id, project, parent, directory, title, version, created, updated)
    (A, "prj_9c1e4d", None, SHOP, "Fix rounding in the checkout total", "1.1.36", "2026-06-02T09:00:00Z",
     "2026-06-03T08:12:00Z"),
    (B, "prj_9c1e4d", A, SHOP, "Find the rounding helpers (@explore subagent)", "1.1.36", "2026-06-02T09:01:10Z",
     "2026-06-02T09:01:40Z"),
    (C, "global", None, "/home/dev", "Explain a shell one-liner", "1.1.36", "2026-06-03T23:58:00Z",
     "2026-06-04T00:00:30Z"),
]

MESSAGES = {
    A: [
        user("msg_a01", A, "2026-06-02T09:00:00Z", "The checkout total is off by a cent for some carts.", SONNET),
        assistant("msg_a02", A, "msg_a01", "2026-06-02T09:00:02Z", "2026-06-02T09:01:05Z", *SONNET, SHOP,
                  tok(12, 310, 0, 0, 18240), 0.073065, [
                      {"type": "step-start"},
                      {"type": "text", "text": "I'll have a subagent look for the rounding helpers first."},
                      tool("task", "toolu_01Ab", {"description": "Find rounding helpers", "prompt": "List every "
                           "function that rounds money.", "subagent_type": "explore"},
                           "round_money in src/money.py; to_cents in src/cart.py", "2026-06-02T09:01:00Z"),
                      {"type": "step-finish", "reason": "tool-calls"}]),
        assistant("msg_a03", A, "msg_a01", "2026-06-02T09:01:41Z", "2026-06-02T09:02:30Z", *SONNET, SHOP,
                  tok(3, 842, 120, 18240, 1310), 0.0226062, [
                      {"type": "reasoning", "text": "to_cents truncates instead of rounding half up."},
                      tool("edit", "toolu_01Cd", {"filePath": f"{SHOP}/src/cart.py", "oldString": "int(x * 100)",
                           "newString": "round_money(x * 100)"}, "Edit applied successfully.", "2026-06-02T09:02:20Z"),
                      {"type": "text", "text": "`to_cents` truncated; it now rounds half up."}]),
        user("msg_a04", A, "2026-06-03T08:10:00Z", "Run the tests again.", CODEX),
        assistant("msg_a05", A, "msg_a04", "2026-06-03T08:10:01Z", "2026-06-03T08:11:30Z", *CODEX, SHOP,
                  tok(5400, 1200, 640, 20480, 0), 0, [
                      tool("bash", "call_7Qz", {"command": "pytest -q", "description": "Run the tests"},
                           "58 passed in 3.1s", "2026-06-03T08:11:00Z"),
                      {"type": "text", "text": "All 58 tests pass."}]),
        assistant("msg_a06", A, "msg_a04", "2026-06-03T08:12:00Z", "2026-06-03T08:12:00Z", *CODEX, SHOP,
                  tok(0, 0, 0, 0, 0), 0, [], error={"name": "MessageAbortedError", "data": {"message": "Aborted"}}),
    ],
    B: [
        user("msg_b01", B, "2026-06-02T09:01:10Z", "List every function that rounds money.", HAIKU),
        assistant("msg_b02", B, "msg_b01", "2026-06-02T09:01:12Z", "2026-06-02T09:01:40Z", *HAIKU, SHOP,
                  tok(2210, 96, 0, 0, 4096), 0.007818, [
                      tool("grep", "toolu_01Ef", {"pattern": "round"}, "src/money.py:3: def round_money(x):\n"
                           "src/cart.py:12: def to_cents(x):", "2026-06-02T09:01:20Z"),
                      {"type": "text", "text": "round_money in src/money.py; to_cents in src/cart.py"}]),
    ],
    C: [  # GitHub Copilot's models: OpenCode records no cost (the subscription pays)
        user("msg_c01", C, "2026-06-03T23:58:00Z", "What does `xargs -0 -n1` do?",
             ("github-copilot", "claude-sonnet-4.5")),
        assistant("msg_c02", C, "msg_c01", "2026-06-03T23:59:50Z", "2026-06-04T00:00:30Z", "github-copilot",
                  "claude-sonnet-4.5", "/home/dev", tok(9876, 240, 0, 0, 0), 0, [
                      {"type": "text", "text": "It runs the command once per NUL-separated argument."}]),
    ],
}

LEGACY_SESSION = {"id": L, "version": "0.15.8", "projectID": "prj_2b7d0a", "directory": "/home/dev/notes",
                  "title": "Rename the notes folders", "time": {"created": ms("2026-05-28T16:20:00Z"),
                                                                 "updated": ms("2026-05-28T16:25:00Z")}}
LEGACY = [  # written before OpenCode recorded a total
    user("msg_l01", L, "2026-05-28T16:20:00Z", "Rename every folder to lower case.", SONNET),
    assistant("msg_l02", L, "msg_l01", "2026-05-28T16:20:03Z", "2026-05-28T16:21:10Z", *SONNET, "/home/dev/notes",
              tok(8, 512, 0, 0, 14020, total=False), 0.060255, [
                  tool("bash", "toolu_01Gh", {"command": "ls"}, "Drafts\nIdeas\nTODO", "2026-05-28T16:21:00Z"),
                  {"type": "text", "text": "Three folders to rename."}]),
    assistant("msg_l03", L, "msg_l01", "2026-05-28T16:21:11Z", "2026-05-28T16:22:00Z", *SONNET, "/home/dev/notes",
              tok(4, 188, 0, 14020, 660, total=False), 0.009503, [{"type": "text", "text": "Renamed."}]),
]


def write_json(path: Path, value: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2) + "\n")


def main() -> None:
    ROOT.mkdir(parents=True, exist_ok=True)
    db = ROOT / "opencode.db"
    db.unlink(missing_ok=True)
    con = sqlite3.connect(db)
    con.executescript(SCHEMA)
    con.executemany("INSERT INTO project VALUES (?, ?, 'git', NULL, 0, 0)", [("prj_9c1e4d", SHOP), ("global", "/")])
    for sid, project, parent, directory, title, version, created, updated in SESSIONS:
        con.execute("INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, time_created, "
                    "time_updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (sid, project, parent, title.lower().replace(" ", "-")[:24], directory, title, version,
                     ms(created), ms(updated)))
        for msg, parts in MESSAGES[sid]:
            data = {k: v for k, v in msg.items() if k not in ("id", "sessionID")}
            t = msg["time"]["created"]
            con.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (msg["id"], sid, t, t, json.dumps(data)))
            for p in parts:
                pdata = {k: v for k, v in p.items() if k not in ("id", "sessionID", "messageID")}
                con.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)", (p["id"], msg["id"], sid, t, t,
                                                                         json.dumps(pdata)))
    con.commit()
    con.execute("PRAGMA journal_mode=DELETE")
    con.execute("VACUUM")
    con.close()
    storage = ROOT / "storage"
    # the migrated session: its old JSON copy (the database holds the same messages)
    write_json(storage / "session" / "prj_9c1e4d" / f"{A}.json",
               {"id": A, "version": "0.15.8", "projectID": "prj_9c1e4d", "directory": SHOP,
                "title": SESSIONS[0][4], "time": {"created": ms(SESSIONS[0][6]), "updated": ms(SESSIONS[0][7])}})
    for msg, parts in MESSAGES[A][:3]:
        write_json(storage / "message" / A / f"{msg['id']}.json", msg)
        for p in parts:
            write_json(storage / "part" / msg["id"] / f"{p['id']}.json", p)
    write_json(storage / "session" / LEGACY_SESSION["projectID"] / f"{L}.json", LEGACY_SESSION)
    for msg, parts in LEGACY:
        write_json(storage / "message" / L / f"{msg['id']}.json", msg)
        for p in parts:
            write_json(storage / "part" / msg["id"] / f"{p['id']}.json", p)


if __name__ == "__main__":
    main()
