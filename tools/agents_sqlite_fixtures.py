"""Writes the SQLite fixtures of the agents whose stores are databases (Kilo's ``kilo.db``, Hermes'
``state.db``) under ``tests/data/agents/<agent>/home/``, as the agents lay them out. Run from the
repository root, then ``tools/ccusage_agents.sh`` for ccusage's reports on them:

    python tools/agents_sqlite_fixtures.py
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
    for k, (sid, mid, at, data, parts) in enumerate(_kilo_messages()):
        con.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (mid, sid, T0 + at, T0 + at, json.dumps(data)))
        for j, p in enumerate(parts):
            con.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                        (f"prt_{mid[4:]}_{j}", mid, sid, T0 + at + j, T0 + at + j, json.dumps(p)))
    con.commit()
    con.execute("VACUUM")
    con.close()


if __name__ == "__main__":
    kilo()
