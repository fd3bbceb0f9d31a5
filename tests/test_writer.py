"""Writing: atomic whole files, append-only SessionWriter across processes, crash repair."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sessionlab.pi.io import SessionWriter, parse_session_bytes, read_session, to_line, write_session
from sessionlab.pi.io.reader import SessionFile
from sessionlab.pi.model import MessageEntry, SessionHeader, UserMessage

HEADER = SessionHeader(version=3, id="s1", timestamp="2026-01-01T00:00:00.000Z", cwd="/w")


def entry(eid: str, parent: str | None = None, text: str = "hi") -> MessageEntry:
    return MessageEntry(id=eid, parent_id=parent, timestamp="2026-01-01T00:00:01.000Z",
                        message=UserMessage(content=text, timestamp=1))


def read(p: Path):
    return read_session(p, on_bad_lines="skip")


def kinds(sf) -> list[tuple[int, str]]:
    return [(i.line, i.kind) for i in sf.issues]


# ---------------------------------------------------------------------------------------------
# SessionWriter in one process


def test_append_writes_header_once_and_whole_lines(tmp_path):
    p = tmp_path / "s.jsonl"
    with SessionWriter(p, header=HEADER) as w:
        w.append(entry("a1"))
        w.append(entry("a2", "a1", "é😀\n"))
    with SessionWriter(p, header=HEADER) as w:  # not empty: no second header
        w.append(entry("a3", "a2"))
    assert p.read_text(encoding="utf-8").splitlines() == [
        to_line(HEADER), to_line(entry("a1")), to_line(entry("a2", "a1", "é😀\n")), to_line(entry("a3", "a2"))]
    sf = read(p)
    assert sf.issues == [] and sf.header == HEADER
    assert sf.entries == [entry("a1"), entry("a2", "a1", "é😀\n"), entry("a3", "a2")]


def test_append_many_and_dicts(tmp_path):
    p = tmp_path / "s.jsonl"
    with SessionWriter(p, header=HEADER) as w:
        w.append_many([entry("a1"), entry("a2", "a1")])
        w.append_many([])
        w.append({"type": "custom", "customType": "x", "data": 1.0, "id": "a3", "parentId": "a2"})
    assert p.read_text().splitlines()[1:] == [
        to_line(entry("a1")), to_line(entry("a2", "a1")),
        '{"type":"custom","customType":"x","data":1,"id":"a3","parentId":"a2"}']


def test_seed_dialect_writer(tmp_path):
    p = tmp_path / "s.jsonl"
    with SessionWriter(p, dialect="seed", header=HEADER) as w:
        w.append(entry("a1"))
        w.append(entry("a2", "a1"))
    assert '"parent_id":"a1"' in p.read_text()
    sf = read(p)
    assert sf.dialect == "seed" and sf.entries == [entry("a1"), entry("a2", "a1")]


def test_writer_errors(tmp_path):
    with pytest.raises(ValueError, match="dialect"):
        SessionWriter(tmp_path / "s.jsonl", dialect="json")  # type: ignore[arg-type]
    w = SessionWriter(tmp_path / "s.jsonl")
    w.close()
    w.close()  # twice is fine
    with pytest.raises(ValueError, match="closed"):
        w.append(entry("a1"))


def test_writer_creates_parent_folders(tmp_path):
    p = tmp_path / "a" / "b" / "s.jsonl"
    with SessionWriter(p, header=HEADER) as w:
        w.append(entry("a1"))
    assert len(p.read_text().splitlines()) == 2


def test_fsync_true(tmp_path, monkeypatch):
    calls: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append(fd), real(fd))[1])
    p = tmp_path / "s.jsonl"
    with SessionWriter(p, fsync=True, header=HEADER) as w:
        w.append(entry("a1"))
        w.append(entry("a2", "a1"))
    assert len(calls) == 3  # header and two appends
    with SessionWriter(p, fsync=False) as w:
        w.append(entry("a3", "a2"))
    assert len(calls) == 3
    sf = read(p)
    assert sf.issues == [] and [e.id for e in sf.entries] == ["a1", "a2", "a3"]


def test_torn_last_line_is_ended_before_the_next_append(tmp_path):
    p = tmp_path / "s.jsonl"
    with SessionWriter(p, header=HEADER) as w:
        w.append(entry("a1"))
    half = to_line(entry("a2", "a1"))[:25]
    with open(p, "ab") as f:  # a writer that died mid-line
        f.write(half.encode())
    sf = read(p)
    assert kinds(sf) == [(3, "truncated_last_line")] and len(sf.entries) == 1

    with SessionWriter(p) as w:
        w.append(entry("a3", "a1"))
    data = p.read_bytes()
    assert data.endswith(b"\n" + half.encode() + b"\n" + to_line(entry("a3", "a1")).encode() + b"\n")
    sf = read(p)
    # the torn line is no longer the last line: it is an ordinary invalid line now
    assert kinds(sf) == [(3, "invalid_json")]
    assert [e.id for e in sf.entries] == ["a1", "a3"] and sf.line_numbers == [2, 4]


def test_torn_file_gets_no_header(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_bytes(b'{"type":"sess')
    with SessionWriter(p, header=HEADER) as w:  # the file is not empty: the header is not added
        w.append(entry("a1"))
    assert p.read_bytes() == b'{"type":"sess\n' + to_line(entry("a1")).encode() + b"\n"


# ---------------------------------------------------------------------------------------------
# several processes

_APPENDER = textwrap.dedent(
    """
    import sys
    from sessionlab.pi.io import SessionWriter
    from sessionlab.pi.model import MessageEntry, SessionHeader, UserMessage
    path, tag, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    header = SessionHeader(version=3, id="s1", timestamp="2026-01-01T00:00:00.000Z", cwd="/w")
    text = tag * 300  # long lines make interleaving likely if the lock did not work
    with SessionWriter(path, header=header) as w:
        sys.stdout.write("ready\\n"); sys.stdout.flush()
        sys.stdin.readline()  # start together
        for i in range(n):
            w.append(MessageEntry(id=f"{tag}{i:05d}", parent_id=None, timestamp="2026-01-01T00:00:01.000Z",
                                  message=UserMessage(content=text)))
    """
)


def test_two_processes_append_without_interleaving(tmp_path):
    p = tmp_path / "s.jsonl"
    n = 2000
    procs = [subprocess.Popen([sys.executable, "-c", _APPENDER, str(p), tag, str(n)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for tag in ("x", "y")]
    for proc in procs:
        assert proc.stdout.readline() == "ready\n"
    for proc in procs:
        proc.stdin.write("go\n")
        proc.stdin.flush()
    for proc in procs:
        assert proc.wait(timeout=60) == 0
    raw = p.read_text(encoding="utf-8").split("\n")
    assert raw[-1] == ""  # ends with a newline
    lines = raw[:-1]
    assert len(lines) == 2 * n + 1
    objs = [json.loads(x) for x in lines]  # every line is valid JSON
    assert objs[0]["type"] == "session" and all(o["type"] == "message" for o in objs[1:])
    for tag in ("x", "y"):
        ids = [o["id"] for o in objs[1:] if o["id"].startswith(tag)]
        assert ids == [f"{tag}{i:05d}" for i in range(n)]  # nothing lost, in order
        assert all(o["message"]["content"] == tag * 300 for o in objs[1:] if o["id"].startswith(tag))
    sf = read(p)
    assert sf.issues == [] and len(sf.entries) == 2 * n


_ENDLESS = textwrap.dedent(
    """
    import sys
    from sessionlab.pi.io import SessionWriter
    from sessionlab.pi.model import MessageEntry, SessionHeader, UserMessage
    header = SessionHeader(version=3, id="s1", timestamp="2026-01-01T00:00:00.000Z", cwd="/w")
    with SessionWriter(sys.argv[1], header=header) as w:
        i = 0
        while True:
            eid = f"{i:08x}"
            w.append(MessageEntry(id=eid, parent_id=f"{i - 1:08x}" if i else None,
                                  timestamp="2026-01-01T00:00:01.000Z", message=UserMessage(content="z" * 2000)))
            sys.stdout.write(eid + "\\n")
            sys.stdout.flush()
            i += 1
    """
)


def test_kill_9_mid_stream_keeps_acknowledged_entries(tmp_path):
    p = tmp_path / "s.jsonl"
    proc = subprocess.Popen([sys.executable, "-c", _ENDLESS, str(p)], stdout=subprocess.PIPE, text=True)
    acked = []
    try:
        while len(acked) < 300:
            line = proc.stdout.readline()
            assert line, "writer ended early"
            acked.append(line.strip())
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    rest = proc.stdout.read()
    acked += [x for x in rest.split("\n")[:-1]]  # complete lines only: printed after the append returned
    proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    sf = read(p)
    ids = [e.id for e in sf.entries]
    assert ids[: len(acked)] == acked  # every acknowledged entry is there, in order
    assert len(ids) - len(acked) <= 1  # at most the one being written when killed
    assert {i.kind for i in sf.issues} <= {"truncated_last_line"}


# ---------------------------------------------------------------------------------------------
# write_session


def test_write_session_new_file(tmp_path):
    sf = SessionFile(path=None, header=HEADER, entries=[entry("a1"), entry("a2", "a1")])
    p = tmp_path / "sub" / "s.jsonl"
    write_session(sf, p)
    assert p.read_text().splitlines() == [to_line(HEADER), to_line(entry("a1")), to_line(entry("a2", "a1"))]
    assert p.read_bytes().endswith(b"\n")
    back = read(p)
    assert back.header == HEADER and back.entries == sf.entries


def test_write_session_leaves_no_temp_files(tmp_path):
    p = tmp_path / "s.jsonl"
    sf = SessionFile(path=None, header=HEADER, entries=[entry("a1")])
    write_session(sf, p)
    write_session(sf, p)  # over an existing file
    assert [x.name for x in tmp_path.iterdir()] == ["s.jsonl"]


def test_write_session_atomic_on_serialization_error(tmp_path):
    p = tmp_path / "s.jsonl"
    bad = MessageEntry(id="a2", message=UserMessage(content="x", extra={"oops": {1, 2}}))
    with pytest.raises(TypeError):
        write_session(SessionFile(path=None, header=HEADER, entries=[entry("a1"), bad]), p)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("where", ["fsync", "replace"])
def test_write_session_atomic_on_io_error(tmp_path, monkeypatch, where):
    p = tmp_path / "s.jsonl"
    original = SessionFile(path=None, header=HEADER, entries=[entry("a1")])
    write_session(original, p)
    before = p.read_bytes()

    def boom(*args):
        raise OSError("disk full")

    monkeypatch.setattr(os, where, boom)
    changed = SessionFile(path=None, header=HEADER, entries=[entry("a1"), entry("a2", "a1")])
    with pytest.raises(OSError, match="disk full"):
        write_session(changed, p)
    monkeypatch.undo()
    assert p.read_bytes() == before  # the old file, whole
    assert [x.name for x in tmp_path.iterdir()] == ["s.jsonl"]  # the temp file is gone


def test_write_session_after_truncated_last_line_ends_with_newline(tmp_path):
    # the dropped torn line took the missing newline with it; the written file must end cleanly,
    # or the next append would be glued to the last good line
    line1 = to_line(entry("a1"))
    data = (to_line(HEADER) + "\n" + line1 + "\n" + '{"type":"mess').encode()
    sf = parse_session_bytes(data, on_bad_lines="skip")
    p = tmp_path / "s.jsonl"
    write_session(sf, p)
    assert p.read_bytes() == (to_line(HEADER) + "\n" + line1 + "\n").encode()
    with SessionWriter(p) as w:
        w.append(entry("a2", "a1"))
    assert read(p).issues == []


def test_write_session_keeps_missing_final_newline_only_for_untouched_last_line(tmp_path):
    data = (to_line(HEADER) + "\n" + to_line(entry("a1"))).encode()
    sf = parse_session_bytes(data, on_bad_lines="skip")
    p = tmp_path / "s.jsonl"
    write_session(sf, p)
    assert p.read_bytes() == data  # byte for byte
    sf.entries.append(entry("a2", "a1"))
    write_session(sf, p)
    assert p.read_bytes() == data + b"\n" + to_line(entry("a2", "a1")).encode() + b"\n"


def test_changed_v1_file_is_written_as_v3(tmp_path, pi_data):
    src = pi_data / "generated/synthetic/synthetic-v1-compaction.jsonl"
    sf = read(src)
    p = tmp_path / "s.jsonl"
    write_session(sf, p)
    assert p.read_bytes() == src.read_bytes()  # unchanged: kept as v1
    sf.entries.append(entry("zz", sf.entries[-1].id))
    write_session(sf, p)
    back = read(p)
    assert back.version == 3 and back.issues == []
    assert back.header == sf.header and back.entries == sf.entries
    assert json.loads(p.read_text().splitlines()[0])["version"] == 3
    assert back.entries[5].first_kept_entry_id == "00000004"


def test_write_session_keeps_the_replaced_files_permissions(tmp_path):
    import os
    import stat

    from sessionlab import read_session, write_session

    src = tmp_path / "s.jsonl"
    src.write_text('{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}\n')
    os.chmod(src, 0o640)
    write_session(read_session(src), src)
    assert stat.S_IMODE(src.stat().st_mode) == 0o640
    new = tmp_path / "new.jsonl"
    write_session(read_session(src), new)
    assert stat.S_IMODE(new.stat().st_mode) == 0o666 & ~_umask()


def _umask():
    import os

    m = os.umask(0)
    os.umask(m)
    return m
