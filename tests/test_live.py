"""Following sessions live: Corpus.follow and watch refresh within a second of a new line, read
only what changed, use no CPU while idle; ``usage blocks --live`` redraws and quits on Ctrl-C."""

from __future__ import annotations

import datetime as dt
import os
import queue
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

import sessionlab as sl
from sessionlab.errors import ArgumentTypeError, MissingDependencyError, OptionError
from sessionlab.tables import _cache, _cache_grow, _cache_keys, _follow
from sessionlab.tables._follow import watched_paths

REPO = Path(__file__).resolve().parent.parent
BACKENDS = ["watchfiles", "poll"]
START = int(time.time() * 1000) - 10 * 60_000  # ten minutes ago: the calls are in the active block
IDLE_SECONDS = 3.0
IDLE_CPU = 0.2  # CPU seconds a follower may use over IDLE_SECONDS of no change


def _usage(cost: float) -> sl.Usage:
    return sl.Usage(input=1000, output=200, cache_read=0, cache_write=0, total_tokens=1200,
                    cost=sl.Cost(input=cost / 2, output=cost / 2, cache_read=0.0, cache_write=0.0, total=cost))


def _reply(session: sl.Session, n: int, cost: float = 0.5, *, start: int = START) -> str:
    """Append an assistant call (``n`` minutes after ``start``) the way an agent writes one."""
    return session.append_message(sl.AssistantMessage(
        content=(sl.TextContent(text=f"reply {n} " + "x" * 1500),), provider="anthropic", model="claude-sonnet-4",
        usage=_usage(cost), stop_reason="stop", timestamp=start + n * 60_000))


def _sessions(folder: Path, count: int = 3, *, start: int = START) -> list[sl.Session]:
    """``count`` pi sessions of a prompt and one call each, written by the session system."""
    repo = sl.JsonlSessionRepo(folder)
    out = []
    for i in range(count):
        s = repo.create(cwd=f"/work/project{i}")
        s.append_message(sl.UserMessage(content=f"task {i}", timestamp=start))
        _reply(s, 1, start=start)
        out.append(s)
    return out


def _file(session: sl.Session, corpus: sl.Corpus) -> str:
    return next(f for f in corpus.files if session.storage.get_metadata().id in f)


@pytest.fixture
def folder(tmp_path):
    return tmp_path / "sessions"


@pytest.mark.parametrize("backend", BACKENDS)
def test_follow_refreshes_within_a_second_of_a_new_line(folder, tmp_path, backend):
    sessions = _sessions(folder)
    corpus = sl.load(folder, cache=tmp_path / "cache")
    seen: list[tuple[float, sl.Corpus]] = []
    with corpus.follow(lambda c: seen.append((time.monotonic(), c)), backend=backend) as f:
        assert f.backend == backend and f.paths == [folder.resolve()]
        time.sleep(0.7)  # (the watch is set up)
        assert f.updates == 0 and f.corpus is corpus  # nothing changed: nothing happened
        _reply(sessions[0], 2)  # (a first change warms up what a refresh imports)
        assert f.wait(10)
        for n in (3, 4):
            t0 = time.monotonic()
            _reply(sessions[0], n)
            assert f.wait(5)
            assert seen[-1][0] - t0 < 1.0, f"the change took {seen[-1][0] - t0:.2f} s to show"
        assert f.error is None and f.updates == 3 == len(seen)
    assert not f.running
    new = seen[-1][1]
    assert new is f.corpus
    assert new.entries.num_rows == corpus.entries.num_rows + 3
    grown = _file(sessions[0], new)
    assert new.changes.appended == [grown] and sorted(new.changes.unchanged) == sorted(set(new.files) - {grown})
    costs = dict(zip(new.sessions["file"].to_pylist(), new.sessions["cost_usd"].to_pylist()))
    assert costs[grown] == pytest.approx(2.0)  # four calls of $0.50


def test_unchanged_files_are_not_read_again(folder, tmp_path, monkeypatch):
    sessions = _sessions(folder)
    time.sleep(2.1)  # files older than the cache's racy window: it trusts their stat
    corpus = sl.load(folder, cache=tmp_path / "cache")

    def boom(*a, **k):
        raise AssertionError("parsed a whole file")

    parsed: list[tuple[str, bytes]] = []
    real = _cache_grow._load_bytes
    crcs: list[str] = []
    real_crc = _cache.file_crc

    def spy(path, data):
        parsed.append((path, data))
        return real(path, data)

    def crc_spy(path, *a, **k):
        crcs.append(str(path))
        return real_crc(path, *a, **k)

    monkeypatch.setattr("sessionlab.tables._load._iter_results", boom)
    monkeypatch.setattr(_cache_grow, "_load_bytes", spy)
    monkeypatch.setattr(_cache, "file_crc", crc_spy)
    monkeypatch.setattr(_cache_keys, "file_crc", crc_spy)
    with corpus.follow(backend="watchfiles") as f:
        time.sleep(0.7)  # (the watch is set up)
        _reply(sessions[1], 2)
        assert f.wait(10), f.error
    assert f.error is None
    grown = _file(sessions[1], f.corpus)
    # one parse: the grown file's new line (after its header and a stand-in for its parent)
    assert [p for p, _ in parsed] == [grown]
    assert parsed[0][1].rstrip(b"\n").endswith(Path(grown).read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[1])
    assert set(crcs) == {grown}  # the grown file's old part is checksummed; the others are not read at all
    assert f.corpus.changes.appended == [grown] and len(f.corpus.changes.unchanged) == 2


def test_a_new_file_and_a_removed_one_are_followed(folder, tmp_path):
    sessions = _sessions(folder, 2)
    corpus = sl.load(folder, cache=tmp_path / "cache")
    with corpus.follow(backend="poll", interval=0.1) as f:
        time.sleep(0.3)
        since = f.updates
        extra = _sessions(folder / "more", 1)[0]
        assert f.wait(5, since=since)
        assert f.wait(0.5) or True  # (the session's two lines may come as one change or two)
        assert len(f.corpus.files) == 3 and any(extra.storage.get_metadata().id in p for p in f.corpus.changes.added
                                                 + f.corpus.changes.appended)
        since = f.updates
        Path(_file(sessions[0], f.corpus)).unlink()
        assert f.wait(5, since=since)
        assert len(f.corpus.files) == 2 and len(f.corpus.changes.removed) == 1


def test_watch_yields_the_corpus_then_each_change(folder, tmp_path):
    sessions = _sessions(folder, 1)
    it = sl.watch(folder, cache=tmp_path / "cache", backend="poll", interval=0.1)
    first = next(it)
    assert first.entries.num_rows == 2
    threading.Timer(0.3, _reply, (sessions[0], 2)).start()
    second = next(it)
    assert second.entries.num_rows == 3 and second.changes.appended == first.files
    before = threading.active_count()
    it.close()  # leaving the loop stops the follower's thread
    assert threading.active_count() == before - 1


def test_watched_paths(tmp_path, monkeypatch):
    (tmp_path / "a" / "b").mkdir(parents=True)
    f = tmp_path / "a" / "x.jsonl"
    f.write_text("")
    assert watched_paths(tmp_path / "a") == [(tmp_path / "a").resolve()]
    assert watched_paths([f, str(tmp_path / "a" / "*" / "*.jsonl")]) == [f.resolve(), (tmp_path / "a").resolve()]
    assert watched_paths(tmp_path / "nowhere") == []
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "pi"))
    (tmp_path / "pi" / "sessions").mkdir(parents=True)
    assert (tmp_path / "pi" / "sessions").resolve() in watched_paths(None, ["pi"])


def test_follow_errors(folder, tmp_path, monkeypatch):
    _sessions(folder, 1)
    corpus = sl.load(folder)
    with pytest.raises(OptionError, match="backend"):
        corpus.follow(backend="inotify")  # type: ignore[arg-type]
    with pytest.raises(ArgumentTypeError, match="interval"):
        corpus.follow(backend="poll", interval=0)
    table_only = sl.Corpus(corpus._results)
    with pytest.raises(ArgumentTypeError, match="not made by load"):
        table_only.follow()
    monkeypatch.setattr(_follow, "has_watchfiles", lambda: False)
    with pytest.raises(MissingDependencyError, match=r"sessionlab\[live\]"):
        corpus.follow(backend="watchfiles")
    with corpus.follow() as f:  # auto: polls without watchfiles
        assert f.backend == "poll"


def test_a_failing_callback_is_kept_and_the_follow_goes_on(folder, tmp_path):
    sessions = _sessions(folder, 1)
    calls = []

    def callback(c):
        calls.append(c)
        if len(calls) == 1:
            raise RuntimeError("first redraw fails")

    with sl.load(folder, cache=tmp_path / "cache").follow(callback, backend="poll", interval=0.1) as f:
        time.sleep(0.3)
        _reply(sessions[0], 2)
        deadline = time.monotonic() + 5
        while f.error is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert isinstance(f.error, RuntimeError)
        _reply(sessions[0], 3)
        assert f.wait(5)
        assert len(calls) == 2 and calls[1].entries.num_rows == 4


# -- CPU while idle, in a subprocess ---------------------------------------------------------------
def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def _lines(proc: subprocess.Popen) -> queue.Queue:
    q: queue.Queue = queue.Queue()

    def pump() -> None:
        for line in proc.stdout:  # type: ignore[union-attr]
            q.put(line)
        q.put(None)

    threading.Thread(target=pump, daemon=True).start()
    return q


def _read_until(q: queue.Queue, text: str, timeout: float = 60) -> str:
    got = []
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            line = q.get(timeout=max(end - time.monotonic(), 0.01))
        except queue.Empty:
            break
        if line is None:
            break
        got.append(line)
        if text in line:
            return "".join(got)
    raise AssertionError(f"no {text!r} in the output: {''.join(got)!r}")


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
            "SESSIONLAB_CACHE_DIR": str(tmp_path / "cache"), "COLUMNS": "120"}


def _idle_cpu(pid: int) -> float:
    before = _cpu_seconds(pid)
    time.sleep(IDLE_SECONDS)
    return _cpu_seconds(pid) - before


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_follower_uses_no_cpu_while_idle(folder, tmp_path, backend):
    _sessions(folder)
    script = textwrap.dedent(f"""
        import time, sessionlab as sl
        f = sl.load({str(folder)!r}).follow(backend={backend!r})
        time.sleep(1.0)
        print("following", f.backend, flush=True)
        time.sleep(60)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=_env(tmp_path))
    try:
        assert f"following {backend}" in _read_until(_lines(proc), "following")
        used = _idle_cpu(proc.pid)
        assert used < IDLE_CPU, f"{used:.2f} s of CPU in {IDLE_SECONDS} s of no change"
    finally:
        proc.kill()
        proc.wait()


def test_cli_blocks_live_redraws_on_a_change_idles_and_quits_on_ctrl_c(folder, tmp_path):
    sessions = _sessions(folder, 2)
    proc = subprocess.Popen([sys.executable, "-m", "sessionlab", "usage", "blocks", str(folder), "--live"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(tmp_path))
    try:
        q = _lines(proc)
        first = _read_until(q, "Session files")
        assert "Active block" in first and "none" not in first
        assert "Cost           $1.00" in first and "Today          $1.00" in first and "claude-sonnet-4" in first
        assert "Calls          2" in first and "Tokens         2,400" in first
        time.sleep(1.0)  # (the watch is set up)
        used = _idle_cpu(proc.pid)
        assert used < IDLE_CPU, f"{used:.2f} s of CPU in {IDLE_SECONDS} s of no change"
        _reply(sessions[1], 5, cost=2.0)
        second = _read_until(q, "Session files", timeout=10)
        assert "Cost           $3.00" in second and "Calls          3" in second and "Today          $3.00" in second
        assert "Burn rate" in second and "tokens/min" in second and "Projection" in second
        proc.send_signal(signal.SIGINT)
        assert proc.wait(10) == 0
        assert proc.stderr.read() == ""  # type: ignore[union-attr]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_cli_live_takes_no_json(folder, capsys):
    _sessions(folder, 1)
    from sessionlab.cli import main

    assert main(["usage", "blocks", str(folder), "--live", "--json"]) == 2
    assert "--live" in capsys.readouterr().err


def test_live_view_of_a_fixed_time(folder, monkeypatch):
    from rich.console import Console

    from sessionlab.cli._live import live_view

    start = dt.datetime(2026, 1, 15, 10, 0, tzinfo=dt.UTC)
    times = iter([start, start, start + dt.timedelta(minutes=1), start + dt.timedelta(minutes=31)])
    # (entries written at these times: header, prompt, two calls)
    monkeypatch.setattr("sessionlab.pi.session.create_timestamp",
                        lambda: next(times).isoformat(timespec="milliseconds").replace("+00:00", "Z"))
    monkeypatch.setattr("sessionlab.pi.storage.create_timestamp",
                        lambda: next(times).isoformat(timespec="milliseconds").replace("+00:00", "Z"))
    ms = int(start.timestamp() * 1000)
    s = _sessions(folder, 1, start=ms)[0]
    _reply(s, 31, cost=1.5, start=ms)
    corpus = sl.load(folder)
    now = dt.datetime(2026, 1, 15, 11, 0, tzinfo=dt.UTC)
    out = Console(width=200, no_color=True, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    out.print(live_view(corpus, token_limit=10_000, now=now, tz="UTC"))
    text = out.export_text()
    assert "Calls          2" in text and "Tokens         2,400" in text and "Cost           $2.00" in text
    # 2,400 tokens over the 30 minutes between the calls: 80 a minute; $2.00 in 30 minutes: $4.00 an hour
    assert "Burn rate      80 tokens/min, $4.00/hour" in text
    assert "Token limit    10,000: 24.0% used" in text
    assert "Active block   2026-01-15 10:00 to 15:00 (UTC), 4h 00m left" in text
    assert "Today          $2.00 (2026-01-15, UTC)" in text
    later = now + dt.timedelta(hours=6)
    out.print(live_view(corpus, now=later))
    assert "none (no call in the last 5 hours)" in out.export_text()


# -- the widgets' live mode, headless (the browser test drives it in JupyterLab) -------------------
def test_widget_live_toggles(folder, tmp_path):
    pytest.importorskip("ipywidgets")
    from sessionlab.widgets import BranchExplorer, SessionTree, UsageDashboard

    sessions = _sessions(folder, 2)
    corpus = sl.load(folder, cache=tmp_path / "cache")
    sid = sessions[0].storage.get_metadata().id
    tree = SessionTree(corpus, session_id=sid)
    explorer = BranchExplorer(corpus, session_id=sid)
    dash = UsageDashboard(corpus)
    assert tree.can_follow and not explorer.live.disabled and not dash.live.disabled
    assert BranchExplorer(corpus.entries).live.disabled  # a table has no files to follow
    tree.selected_id = tree.tree["ids"][0]
    tree.live = True
    explorer.live.value = dash.live.value = True
    try:
        time.sleep(0.7)
        _reply(sessions[0], 2)
        deadline = time.monotonic() + 10
        while min(w._live.updates for w in (tree, explorer, dash)) < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert tree.tree["n"] == 3 and tree.selected_id == tree.tree["ids"][0]  # the pick is kept
        assert "3 entries" in explorer.header.value and explorer.entry.value == tree.tree["ids"][-1]
        assert "3 calls" in dash.status.value and "1 grown" in dash.status.value
    finally:
        tree.live = False
        explorer.live.value = False
        dash.close()  # closing a live widget stops its follower
    assert not any(w._live.on for w in (tree, explorer, dash))


def test_a_failing_redraw_shows_on_the_toggle(folder, tmp_path, monkeypatch):
    pytest.importorskip("ipywidgets")
    from sessionlab.widgets import UsageDashboard

    session = _sessions(folder, 1)[0]
    dash = UsageDashboard(sl.load(folder, cache=tmp_path / "cache"))

    def broken(corpus):
        raise RuntimeError("no room to draw")

    monkeypatch.setattr(dash._live, "_show", broken)
    dash.live.value = True
    try:
        time.sleep(0.7)
        _reply(session, 2)
        deadline = time.monotonic() + 10
        while dash._live.error is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert dash.live.button_style == "danger" and "no room to draw" in dash.live.tooltip
        assert isinstance(dash._live.follower.error, RuntimeError) and dash._live.follower.running
    finally:
        dash.close()


def test_a_watch_that_fails_stops_and_says_why(folder, tmp_path, monkeypatch):
    _sessions(folder, 1)

    def gone(self):
        raise OSError("the folder is gone")
        yield  # (a generator, as the real ones)

    monkeypatch.setattr(_follow.Follower, "_poll", gone)
    f = sl.load(folder).follow(backend="poll")
    f._thread.join(5)
    assert not f.running and isinstance(f.error, OSError)
    assert f.wait(5) is False  # (returns at once: nothing more will come)
