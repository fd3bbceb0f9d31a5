"""Redaction: planted secrets of every kind, in every text field of every agent's files, never reach a
shared output (the redacted tables, the exported files, the HTML report, Parquet), while every
number, id and link stays as it was.

The planted files are made here: sessions written by ``sessionlab.synth`` for pi, Claude Code and
Codex, then every string value of every line that is not structural (ids, types, roles,
timestamps, models) gets one of the planted secrets appended, in turn, so each field holds one
and each kind sits in many fields.
"""

from __future__ import annotations

import base64
import json
import re
import sys
import urllib.parse
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import sessionlab as sl
from sessionlab.cli import main
from sessionlab.redaction import TEXT_COLUMNS, Redactor, export_sessions, redact
from sessionlab.redaction._files import STRUCTURAL_KEYS
from sessionlab.redaction._json import rewrite_line
from sessionlab.synth import SynthConfig, generate_claude_session, generate_codex_session, generate_session
from sessionlab.tables import BLOCK_SCHEMA, ENTRY_SCHEMA, ISSUE_SCHEMA, SESSION_SCHEMA

DATA = Path(__file__).resolve().parent.parent / "data"
USER, HOST = "zorblatt", "zorbhost42"
_PEM_BODY = ("MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0",
             "DSpn1R6Fm6Tnh2YkQZVP3HqPfT7yGk2Lk8Cq0vXz4eWbRj9aN1sM5tYhU3oIi7pK2dQ6rFgJxE8")
_SSH_BODY = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZWQyNTUxOQ"

# (kind, the text planted, the secret values in it that must never come out)
PLANTED: list[tuple[str, str, tuple[str, ...]]] = [
    ("aws-access-key", "key AKIAQX7B2KD9PLM3ZT4W here", ("AKIAQX7B2KD9PLM3ZT4W",)),
    ("aws-secret-key", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzz9Q1kLm3T",
     ("wJalrXUtnFEMI/K7MDENG/bPxRfiCYzz9Q1kLm3T",)),
    ("github-token", "GH ghp_R8sT2uV4wX6yZ8aB0cD2eF4gH6iJ8kL0mN2p", ("ghp_R8sT2uV4wX6yZ8aB0cD2eF4gH6iJ8kL0mN2p",)),
    ("github-pat", "github_pat_11ABCDEFG0aZ9yX8wV7uT6_sR5qP4oN3mL2kJ1iH0gF9eD8cB7aZ6yX5wV4uT3sR2qP1oN0mL9kJ8iH7gF6",
     ("github_pat_11ABCDEFG0aZ9yX8wV7uT6_sR5qP4oN3mL2kJ1iH0gF9eD8cB7aZ6yX5wV4uT3sR2qP1oN0mL9kJ8iH7gF6",)),
    ("gitlab-token", "glpat-Zq3Xw9Ty7Ub5Vc1Nd8Me", ("glpat-Zq3Xw9Ty7Ub5Vc1Nd8Me",)),
    ("slack-token", "xoxb-2048592734-4830291837465-Qz8Xw2Vy6Ut4Sr0Pq", ("xoxb-2048592734-4830291837465-Qz8Xw2Vy6Ut4Sr0Pq",)),
    ("slack-webhook", "https://hooks.slack.com/services/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",
     ("T04BX7Y2Q/B05CZ9W1R/k3J8hL2mN6pQ9rS4tV7wX1yZ",)),
    ("stripe-key", "stripe sk_live_51Hq8ZkLm3Np7Qr9St2Uv4Wx", ("sk_live_51Hq8ZkLm3Np7Qr9St2Uv4Wx",)),
    ("openai-key", "OPENAI sk-proj-Xq7Zr2Lm9Np4Kt6Wv8Ys3Bd5Fh1Jc0Gx", ("sk-proj-Xq7Zr2Lm9Np4Kt6Wv8Ys3Bd5Fh1Jc0Gx",)),
    ("anthropic-key", "sk-ant-api03-Vb7Nm2Qx9Lk4Jh6Gf8Ds1Az3Wc5Er0Ty-Ui9Op2", ("sk-ant-api03-Vb7Nm2Qx9Lk4Jh6Gf8Ds1Az3Wc5Er0Ty-Ui9Op2",)),
    ("google-api-key", "AIzaSyD8Kq3Xw7Zp2Lm9Nr4Tv6Yb1Hc5Jf0Gs3Q", ("AIzaSyD8Kq3Xw7Zp2Lm9Nr4Tv6Yb1Hc5Jf0Gs3Q",)),
    ("google-oauth", "ya29.a0AfH6SMBx7Kq2Zp9Lm4Nr8Tv1Yb6Hc3Jf", ("ya29.a0AfH6SMBx7Kq2Zp9Lm4Nr8Tv1Yb6Hc3Jf",)),
    ("huggingface-token", "hf_Qx7Zr2Lm9Np4Kt6Wv8Ys3Bd5Fh1Jc0GxAb", ("hf_Qx7Zr2Lm9Np4Kt6Wv8Ys3Bd5Fh1Jc0GxAb",)),
    ("npm-token", "npm_Qx7Zr2Lm9Np4Kt6Wv8Ys3Bd5Fh1Jc0GxAbCd", ("npm_Qx7Zr2Lm9Np4Kt6Wv8Ys3Bd5Fh1Jc0GxAbCd",)),
    ("pypi-token", "pypi-AgEIcHlwaS5vcmcCJDQ4YzU3ZjI5LWE5ZjEtNGNhZS1iNjM3LTAxMjM0NTY3ODlhYgACKlszLCJhYmMiXQ",
     ("pypi-AgEIcHlwaS5vcmcCJDQ4YzU3ZjI5LWE5ZjEtNGNhZS1iNjM3LTAxMjM0NTY3ODlhYgACKlszLCJhYmMiXQ",)),
    ("sendgrid-key", "SG.Qx7Zr2Lm9Np4Kt6Wv8Ys3B.d5Fh1Jc0GxAbCdEf7Gh2Ij4Kl6Mn8Op0Qr2St4Uv6Wx",
     ("SG.Qx7Zr2Lm9Np4Kt6Wv8Ys3B.d5Fh1Jc0GxAbCdEf7Gh2Ij4Kl6Mn8Op0Qr2St4Uv6Wx",)),
    ("twilio-key", "twilio SK0f1e2d3c4b5a69788796a5b4c3d2e1f0", ("SK0f1e2d3c4b5a69788796a5b4c3d2e1f0",)),
    ("mailchimp-key", "mc 0f1e2d3c4b5a69788796a5b4c3d2e1f0-us12", ("0f1e2d3c4b5a69788796a5b4c3d2e1f0-us12",)),
    ("discord-token", "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs",
     ("MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs",)),
    ("telegram-token", "bot 5839201746:AAH7kQ2zX9wV4uT6sR8qP0oN1mL3kJ5iH7g", ("5839201746:AAH7kQ2zX9wV4uT6sR8qP0oN1mL3kJ5iH7g",)),
    ("square-oauth", "sq0csp-Qx7Zr2Lm9Np4Kt6Wv8Ys3Bd5Fh1Jc0GxAbCdEf7Gh2Ij4", ("sq0csp-Qx7Zr2Lm9Np4Kt6Wv8Ys3Bd5Fh1Jc0GxAbCdEf7Gh2Ij4",)),
    ("artifactory", "artifactory AKCp8jQx7Zr2Lm9Np4Kt6Wv8Ys3Bd5Fh1Jc0Gx", ("AKCp8jQx7Zr2Lm9Np4Kt6Wv8Ys3Bd5Fh1Jc0Gx",)),
    ("jwt", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ6b3JibGF0dCIsImlhdCI6MTUxNjIzOTAyMn0.Qx7Zr2Lm9Np4Kt6Wv8Ys3Bd5Fh1Jc0GxAbCdEf7Gh",
     ("eyJzdWIiOiJ6b3JibGF0dCIsImlhdCI6MTUxNjIzOTAyMn0", "Qx7Zr2Lm9Np4Kt6Wv8Ys3Bd5Fh1Jc0GxAbCdEf7Gh")),
    ("rsa-private-key", "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(_PEM_BODY) + "\n-----END RSA PRIVATE KEY-----",
     _PEM_BODY),
    ("openssh-private-key", "-----BEGIN OPENSSH PRIVATE KEY-----\n" + _SSH_BODY + "\n-----END OPENSSH PRIVATE KEY-----",
     (_SSH_BODY,)),
    ("azure-storage-key", "DefaultEndpointsProtocol=https;AccountName=zorbstore;AccountKey="
     "Qx7Zr2Lm9Np4Kt6Wv8Ys3Bd5Fh1Jc0GxAbCdEf7Gh2Ij4Kl6Mn8Op0Qr2St4Uv6Wx8Yz0Ab2Cd4Ef6Gh8Ij0Kl2Mn4Op6Q==;",
     ("Qx7Zr2Lm9Np4Kt6Wv8Ys3Bd5Fh1Jc0GxAbCdEf7Gh2Ij4Kl6Mn8Op0Qr2St4Uv6Wx8Yz0Ab2Cd4Ef6Gh8Ij0Kl2Mn4Op6Q==",)),
    ("url-password", "postgres://admin:Zr7pQ2xW9vK4@db.zorbcorp.internal:5432/app", ("Zr7pQ2xW9vK4", "zorbcorp")),
    ("bearer-token", "Authorization: Bearer c2VjcmV0LXplcm8tdG9rZW4tOTg3NjU0", ("c2VjcmV0LXplcm8tdG9rZW4tOTg3NjU0",)),
    ("env-password", "DB_PASSWORD=Tr0ub4dor&3xyzQ", ("Tr0ub4dor&3xyzQ",)),
    ("json-api-token", '{"api_token": "Kx9Lm2Np4Qr6St8Uv0Wx"}', ("Kx9Lm2Np4Qr6St8Uv0Wx",)),
    ("yaml-client-secret", "client_secret: 7fQ2zX9wV4uT6sR8qP0o", ("7fQ2zX9wV4uT6sR8qP0o",)),
    ("high-entropy-base64", "blob Zq8r3LmN0pXv7YtW2sKd9FgH5jBc1RuEaT6y end", ("Zq8r3LmN0pXv7YtW2sKd9FgH5jBc1RuEaT6y",)),
    ("high-entropy-hex", 'checksum = "d4c3b2a1f0e9d8c7b6a5948372615049a8b7c6d5"', ("d4c3b2a1f0e9d8c7b6a5948372615049a8b7c6d5",)),
    ("email", "mail alice.zorblatt@zorbcorp.io now", ("alice.zorblatt@zorbcorp.io",)),
    ("home-path", f"open /home/{USER}/secret-proj/.env", (f"/home/{USER}",)),
    ("mac-home-path", f"ls /Users/{USER}/Library", (f"/Users/{USER}",)),
    ("private-host", "ssh build-07.zorbcorp.internal", ("build-07.zorbcorp.internal",)),
    ("url-host", "fetch https://git.zorbcorp.io/team/repo", ("git.zorbcorp.io",)),
    ("private-ip", "connect 10.42.7.19:8080", ("10.42.7.19",)),
    ("public-ip", "server 93.184.216.34 is up", ("93.184.216.34",)),
    ("shell-prompt", f"{USER}@{HOST}:~/src$ make", (HOST,)),
]
NEVER = sorted({v for _, _, values in PLANTED for v in values} | {USER, HOST, "zorbcorp"})


def _forms(value: str) -> set[str]:
    """The value and the encodings a page or a file could carry it in."""
    b = value.encode()
    return {value, urllib.parse.quote(value, safe=""), urllib.parse.quote_plus(value),
            base64.b64encode(b).decode(), base64.urlsafe_b64encode(b).decode().rstrip("="),
            json.dumps(value)[1:-1]}


def _leaks(root: Path) -> list[str]:
    """Every planted value (or encoding of it) found in the files below ``root``."""
    found = []
    for f in sorted(p for p in root.rglob("*") if p.is_file()):
        raw = f.read_bytes()
        text = raw.decode("utf-8", "replace") + str(f.relative_to(root))
        for v in NEVER:
            for form in _forms(v):
                if form in text or (len(v) >= 16 and v[4:16] in text):
                    found.append(f"{f.relative_to(root)}: {v!r} as {form!r}")
    return found


def _plant_file(path: Path) -> None:
    """Append a planted secret, in turn, to every non-structural string value of the file."""
    turn = iter(range(10**9))
    lines = path.read_text(encoding="utf-8").split("\n")

    def plant(value: str, keys: tuple[str, ...]) -> str | None:
        if keys and keys[-1] in STRUCTURAL_KEYS:
            return None
        if keys and keys[-1] == "cwd":
            return f"/home/{USER}/secret-proj"
        return f"{value} {PLANTED[next(turn) % len(PLANTED)][1]}"

    path.write_text("\n".join(rewrite_line(line, plant)[0] if line else line for line in lines), encoding="utf-8")


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("planted")
    cfg = SynthConfig(cwd=f"/home/{USER}/secret-proj")
    generate_session(root / "pi" / f"--home-{USER}-secret-proj--", seed=3, config=cfg, turns=6)
    generate_claude_session(root / "claude", seed=3, turns=4, cwd=f"/home/{USER}/secret-proj")
    generate_codex_session(root / "codex", seed=3, turns=3)
    for f in root.rglob("*.jsonl"):
        _plant_file(f)
    return root


@pytest.fixture(scope="module")
def outputs(planted, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("shared")
    assert main(["export", str(planted), "-o", str(out / "files"), "--redact"]) == 0
    assert main(["export", str(planted), "-o", str(out / "parquet"), "--redact", "--format", "parquet"]) == 0
    assert main(["report", str(planted), "-o", str(out / "report.html"), "--redact"]) == 0
    return out


def test_the_planted_files_hold_every_kind_in_every_agent_s_files(planted):
    assert len({kind for kind, _, _ in PLANTED}) >= 30
    corpus = sl.load(planted, progress=False, on_bad_lines="skip")
    assert sorted(set(corpus.sessions["agent"].to_pylist())) == ["claude-code", "codex", "pi"]
    for agent_dir in ("pi", "claude", "codex"):
        text = "\n".join(f.read_text() for f in (planted / agent_dir).rglob("*.jsonl"))
        missing = [v for v in NEVER if v not in text and json.dumps(v)[1:-1] not in text]
        assert missing == [], agent_dir
    assert _leaks(planted)  # the search finds what is there


@pytest.mark.parametrize("kind,text,values", PLANTED, ids=[k for k, _, _ in PLANTED])
def test_each_kind_is_redacted(kind, text, values):
    r = Redactor()
    r.learn(f"/home/{USER}/x {USER}@{HOST}:~/src$")
    out, found = r.text(f"before {text} after")
    assert found, kind
    for v in values:
        assert v not in out, (kind, out)
    assert out.startswith("before ") and out.endswith(" after")


def test_nothing_planted_reaches_the_exported_files_the_parquet_or_the_report(outputs):
    page = (outputs / "report.html").read_text()
    assert len(page) > 10_000 and "sessionlab-redacted-" not in page  # (the temporary copies' folder)
    assert "[REDACTED-" in page and "(redacted)" in page
    assert sorted(p.name for p in (outputs / "parquet").iterdir()) == ["entries", "issues", "redactions", "sessions",
                                                                        "texts"]
    assert len(list((outputs / "files").rglob("*.jsonl"))) >= 4
    assert _leaks(outputs) == []


def test_redacted_tables_and_texts_hold_nothing_planted(planted):
    r = redact(planted)
    for name in ("entries", "sessions", "issues", "labels", "texts", "redactions"):
        table = getattr(r, name)
        text = json.dumps(table.to_pylist(), default=str)
        assert [v for v in NEVER if v in text] == [], name
    assert r.texts.num_rows > 100
    kinds = Counter(r.redactions["kind"].to_pylist())
    assert kinds["home-path"] > 0 and kinds["user"] > 0 and kinds["email"] > 0 and kinds["private-key"] > 0
    assert set(r.redactions["source"].to_pylist()) >= {"file", "sessions", "entries"}


def test_an_exported_pi_file_loads_clean_with_the_same_tokens_and_costs(planted, outputs):
    (pi_out,) = (outputs / "files" / "pi").rglob("*.jsonl")
    (pi_in,) = (planted / "pi").rglob("*.jsonl")
    assert USER not in str(pi_out)
    sf = sl.read_session(pi_out)
    assert sf.issues == []
    a, b = sl.load(pi_in, progress=False), sl.load(pi_out, progress=False)
    assert b.issues.num_rows == 0
    for col in ("entry_id", "parent_id", "type", "role", "input_tokens", "output_tokens", "cache_read_tokens",
                "cache_write_tokens", "total_tokens", "cost_usd", "timestamp", "model", "line_no"):
        assert a.entries[col].equals(b.entries[col]), col
    # every line keeps its ids and numbers byte for byte: only string values changed
    for x, y in zip(pi_in.read_text().split("\n"), pi_out.read_text().split("\n")):
        if x:
            ox, oy = json.loads(x), json.loads(y)
            assert (ox.get("id"), ox.get("parentId"), ox.get("timestamp")) == (oy.get("id"), oy.get("parentId"),
                                                                            oy.get("timestamp"))
            assert re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])", re.sub(r'"(?:[^"\\]|\\.)*"', "", x)) == \
                re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])", re.sub(r'"(?:[^"\\]|\\.)*"', "", y))


def test_exported_agent_files_load_with_the_same_numbers(planted, outputs):
    a = sl.load(planted, progress=False, on_bad_lines="skip")
    b = sl.load(outputs / "files", progress=False, on_bad_lines="skip")
    key = ["agent", "session_id"]
    sa, sb = a.sessions.sort_by([(k, "ascending") for k in key]), b.sessions.sort_by([(k, "ascending") for k in key])
    for col in ("session_id", "agent", "entry_count", "call_count", "leaf_count", "fork_count", "input_tokens",
                "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_usd", "issue_count"):
        assert sa[col].equals(sb[col]), col


def test_tables_are_equal_in_every_non_text_column(planted):
    corpus = sl.load(planted, progress=False, on_bad_lines="skip")
    r = redact(corpus)
    for name, text in TEXT_COLUMNS.items():
        before, after = getattr(corpus, name), getattr(r, name)
        assert before.column_names == after.column_names and before.num_rows == after.num_rows
        for col in before.column_names:
            if col not in text:
                assert before[col].equals(after[col]), (name, col)
    changed = [c for c in TEXT_COLUMNS["sessions"] if not corpus.sessions[c].equals(r.sessions[c])]
    assert set(changed) >= {"file", "cwd"}


# the string columns that are not text: ids, links, enumerations (copied as they are)
NOT_TEXT = {
    "session_id", "entry_id", "parent_id", "type", "role", "provider", "model", "api", "stop_reason", "tool_name",
    "thinking_level", "first_kept_entry_id", "from_id", "target_id", "custom_type", "response_model", "usage_kind",
    "edit_action", "cost_source", "agent", "message_id", "request_id", "root_session_id", "subagent_type",
    "dialect", "leaf_id", "loader", "agent_version", "parent_session_id", "parent_tool_call_id", "kind",
    "block_type", "tool_call_id",
}


@pytest.mark.parametrize("name,schema", [("entries", ENTRY_SCHEMA), ("sessions", SESSION_SCHEMA),
                                         ("issues", ISSUE_SCHEMA), ("labels", None), ("blocks", BLOCK_SCHEMA)])
def test_every_string_column_is_declared_text_or_not(name, schema):
    if schema is None:
        schema = sl.load(DATA / "pi", progress=False).labels.schema
    strings = {f.name for f in schema if pa.types.is_string(f.type)}
    text = set(TEXT_COLUMNS.get(name, ()))
    assert text <= strings
    assert strings - text <= NOT_TEXT, strings - text - NOT_TEXT


def test_the_same_value_gets_the_same_placeholder_across_files_and_tables(planted):
    r = redact(planted)
    texts = "\n".join(t for t in r.texts["text"].to_pylist())
    aws = set(re.findall(r"\[REDACTED-aws-access-key-\d+\]", texts))
    assert aws == {"[REDACTED-aws-access-key-1]"}
    by_placeholder = Counter(r.redactions.filter(pa.compute.equal(r.redactions["kind"], "aws-access-key"))["file"]
                             .to_pylist())
    assert len(by_placeholder) >= 3  # in the files of all three agents, one placeholder
    assert set(r.sessions["cwd"].to_pylist()) == {"~/secret-proj"}


def test_redactions_never_hold_a_value_and_say_where(planted):
    r = redact(planted)
    rows = r.redactions.to_pylist()
    assert rows and all(re.fullmatch(r"\[REDACTED-[a-z0-9-]+-\d+\]|~", x["placeholder"]) for x in rows)
    files = [x for x in rows if x["source"] == "file"]
    assert all(x["line_no"] >= 1 and x["column"] for x in files)
    assert any(x["entry_id"] for x in files) and any(x["column"] == "message.content.text" for x in files)
    assert r.redactions.schema.names == [c.name for c in sl.redaction.REDACTION_COLUMNS]
    assert r.redactions_df().shape[0] == len(rows)


def test_a_table_is_redacted_alone(planted):
    entries = sl.load(planted, progress=False, on_bad_lines="skip").entries
    r = redact(entries)
    assert r.entries.num_rows == entries.num_rows and r.texts.num_rows == 0
    assert not any(USER in f for f in r.entries["file"].to_pylist())
    assert r.entries["cost_usd"].equals(entries["cost_usd"])
    with pytest.raises(sl.ArgumentTypeError):
        redact(entries, out="x")


def test_lines_without_findings_stay_byte_for_byte(tmp_path):
    """Codex writes JSON its own way (serde's escapes): a redacted copy of a real rollout differs only
    in the string values that were redacted."""
    src = next((Path(__file__).parent / "data" / "codex" / "real").rglob("*.jsonl"))
    (out,) = export_sessions(src, tmp_path)
    changed = 0
    for x, y in zip(src.read_text().split("\n"), out.read_text().split("\n")):
        if x != y:
            changed += 1
            assert "[REDACTED-" in y or "~" in y
            assert json.loads(y).keys() == json.loads(x).keys()
    assert src.read_text().count("\n") == out.read_text().count("\n")
    plain = tmp_path / "plain"
    (copy,) = export_sessions(src, plain, redacted=False)
    assert copy.read_bytes() == src.read_bytes()


def test_a_damaged_line_is_redacted_as_text(tmp_path):
    src = tmp_path / "in" / "s.jsonl"
    src.parent.mkdir()
    header = '{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"}'
    src.write_text(header + '\n{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"AKIAQX7B2KD9PLM3ZT4W\n')
    (out,) = export_sessions(src, tmp_path / "out")
    assert "AKIAQX7B2KD9PLM3ZT4W" not in out.read_text() and "[REDACTED-aws-access-key-1]" in out.read_text()


def test_false_positive_rate_on_the_repo_s_ordinary_sessions():
    """data/ holds no secret: what the secret detectors flag there is a false positive (home paths,
    user and host names are redacted on purpose and not counted). Measured: docs/redaction.md."""
    r = redact(DATA)
    privacy = {"home-path", "user", "host", "email", "private-ip"}
    flagged = r.redactions.filter(pa.compute.invert(pa.compute.is_in(r.redactions["kind"], pa.array(sorted(privacy)))))
    values = r.texts.num_rows
    assert values > 10_000
    assert flagged.num_rows / values < 0.001, Counter(flagged["kind"].to_pylist())  # measured: 0


def test_missing_detect_secrets_names_the_extra(monkeypatch):
    from sessionlab.redaction import _scanner

    _scanner._plugins_and_filters.cache_clear()
    monkeypatch.setitem(sys.modules, "detect_secrets", None)
    monkeypatch.setitem(sys.modules, "detect_secrets.core.plugins.util", None)
    try:
        with pytest.raises(sl.MissingDependencyError, match=r"sessionlab\[redact\]"):
            Redactor()
    finally:
        _scanner._plugins_and_filters.cache_clear()


def test_parquet_export_reads_back(outputs):
    entries = pq.read_table(outputs / "parquet" / "entries")
    texts = sl.tables.read_parquet(outputs / "parquet" / "texts")
    assert entries.num_rows > 50 and texts.num_rows > 100
    assert not any(USER in (f or "") for f in entries["file"].to_pylist())


@pytest.mark.parametrize("line,expected,entry", [
    # only the changed literal is written anew: serde's \u escapes, number forms and spacing stay
    ('{"id": "e1", "n": 1.50, "t": "1\\u002f2", "text": "secret"}', '{"id": "e1", "n": 1.50, "t": "1\\u002f2", "text": "SECRET"}', "e1"),
    # arrays take their key; nested objects give the dotted path; keys are never changed
    ('{"uuid":"u","message":{"content":[{"type":"text","text":"a"},"b"]}}',
     '{"uuid":"u","message":{"content":[{"type":"text","text":"A"},"B"]}}', "u"),
    # a pi header's id is the session's
    ('{"type":"session","id":"s1","cwd":"/x"}', '{"type":"session","id":"s1","cwd":"/X"}', None),
    # a line of a pretty-printed file: a string followed by ':' is a key
    ('    "text": "abc",', '    "text": "ABC",', None),
])
def test_rewrite_line_changes_only_string_values(line, expected, entry):
    def upper(value, keys):
        return None if keys and keys[-1] in STRUCTURAL_KEYS else value.upper()

    assert rewrite_line(line, upper) == (expected, entry)
