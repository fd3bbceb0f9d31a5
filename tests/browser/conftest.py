"""Browser fixtures: Debian's Chromium driven by Playwright, a JupyterLab (and Voila) server on 127.0.0.1.

The tests skip, saying why, only when Playwright or a Chromium binary cannot be found (``.ci/run``
installs ``chromium`` with apt-get when it is missing). Playwright never downloads a browser here:
it launches the system one through ``executable_path``. A failing test leaves a full-page
screenshot in ``.browser-artifacts/`` (or ``$SESSIONLAB_BROWSER_ARTIFACTS``).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("SESSIONLAB_BROWSER_ARTIFACTS", REPO / ".browser-artifacts"))
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")


def chromium_path() -> str | None:
    """The system Chromium: ``$SESSIONLAB_CHROMIUM``, then Debian's paths, then ``$PATH``."""
    env = os.environ.get("SESSIONLAB_CHROMIUM")
    for c in ([env] if env else []) + list(CANDIDATES):
        if c and os.access(c, os.X_OK):
            return c
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    rep = yield
    setattr(item, f"rep_{rep.when}", rep)
    return rep


@pytest.fixture(scope="session")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip('browser tests need Playwright: pip install "sessionlab[browser]"')
    exe = chromium_path()
    if exe is None:
        pytest.skip("browser tests need Chromium: no /usr/bin/chromium (apt-get install chromium) "
                    "and none on $PATH or in $SESSIONLAB_CHROMIUM")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
        yield b
        b.close()


def new_page(browser, *, width: int = 1300, height: int = 900):
    """A page in a fresh context; its console errors collect in ``page.errors``.

    1,300 px with JupyterLab's file browser open leaves a notebook about 1,000 px wide.
    """
    ctx = browser.new_context(viewport={"width": width, "height": height})
    pg = ctx.new_page()
    pg.errors = []
    pg.on("console", lambda m: pg.errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: pg.errors.append(f"page error: {e}"))
    pg.remote = []  # requests that left 127.0.0.1 (file: and data: aside)
    pg.on("request", lambda r: pg.remote.append(r.url) if not r.url.startswith(
        ("http://127.0.0.1", "file:", "data:", "blob:", "about:")) else None)
    return pg


def screenshot_if_failed(request, pg) -> None:
    """A full-page screenshot of ``pg`` in the artifacts folder when the test failed."""
    rep = getattr(request.node, "rep_call", None)
    if rep is not None and rep.failed:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        name = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in request.node.nodeid.split("::")[-1])
        try:
            pg.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
        except Exception as e:  # the page may be gone; the failure itself is what matters
            print(f"no screenshot: {e}", file=sys.stderr)


def doc_screenshot(locator, name: str) -> None:
    """With ``$SESSIONLAB_DOC_SCREENSHOTS`` set to a folder, save a picture of ``locator`` there
    (how the README's pictures in docs/ are made: see docs/README.md)."""
    folder = os.environ.get("SESSIONLAB_DOC_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        locator.screenshot(path=str(Path(folder) / f"{name}.png"))


@pytest.fixture
def page(browser, request):
    """A fresh page 1,300 x 900 px; screenshot on failure."""
    pg = new_page(browser)
    yield pg
    screenshot_if_failed(request, pg)
    pg.context.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_http(url: str, proc: subprocess.Popen, log: Path, timeout: float = 90) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited ({proc.returncode}):\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"server not up after {timeout}s:\n{log.read_text()[-3000:]}")


class Server:
    def __init__(self, root: Path, url: str, proc: subprocess.Popen, log: Path) -> None:
        self.root, self.url, self.proc, self.log = root, url, proc, log


def _jupyter_env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    for key, sub in (("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_DATA_DIR", "data"),
                     ("JUPYTER_RUNTIME_DIR", "runtime"), ("IPYTHONDIR", "ipython")):
        (tmp / sub).mkdir(parents=True, exist_ok=True)
        env[key] = str(tmp / sub)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["MPLBACKEND"] = "Agg"
    settings = tmp / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True, exist_ok=True)  # no "get news?" pop-up over the notebook
    (settings / "notification.jupyterlab-settings").write_text('{"fetchNews": "false"}')
    notebook = tmp / "settings" / "@jupyterlab" / "notebook-extension"
    notebook.mkdir(parents=True, exist_ok=True)  # every cell rendered, on screen or not (text is readable)
    (notebook / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
    env["JUPYTERLAB_SETTINGS_DIR"] = str(tmp / "settings")
    env["JUPYTERLAB_WORKSPACES_DIR"] = str(tmp / "workspaces")
    return env


def _start(argv: list[str], tmp: Path, ready_path: str, port: int) -> Server:
    root = tmp / "root"
    root.mkdir(parents=True, exist_ok=True)
    log = tmp / "server.log"
    fh = open(log, "w")  # noqa: SIM115 - kept open for the server's life
    proc = subprocess.Popen(argv, cwd=root, env=_jupyter_env(tmp), stdout=fh, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_http(url + ready_path, proc, log)
    except Exception:
        proc.kill()
        raise
    return Server(root, url, proc, log)


def _stop(server: Server) -> None:
    server.proc.terminate()
    try:
        server.proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        server.proc.kill()


@pytest.fixture(scope="session")
def jupyterlab(browser) -> Iterator[Server]:
    """JupyterLab on 127.0.0.1 (free port, no token, ``window.jupyterapp`` exposed, temp dirs)."""
    tmp = Path(tempfile.mkdtemp(prefix="sessionlab-lab-"))
    port = free_port()
    argv = [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ServerApp.ip=127.0.0.1",
            "--IdentityProvider.token=", "--ServerApp.password=", "--LabApp.expose_app_in_browser=True",
            f"--ServerApp.root_dir={tmp / 'root'}", "--ServerApp.open_browser=False",
            "--ServerApp.disable_check_xsrf=True", "--LabApp.news_url=None", "--LabApp.check_for_updates_class="
            "jupyterlab.NeverCheckForUpdate"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        argv.append("--allow-root")
    server = _start(argv, tmp, "/api/status", port)
    yield server
    _stop(server)
    shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="session")
def voila(browser) -> Iterator[Server]:
    """Voila on 127.0.0.1 (free port, temp dirs) serving the notebooks of its root folder."""
    pytest.importorskip("voila", reason='Voila tests need voila: pip install "sessionlab[browser]"')
    tmp = Path(tempfile.mkdtemp(prefix="sessionlab-voila-"))
    port = free_port()
    (tmp / "root").mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "voila", "--no-browser", f"--port={port}", "--Voila.ip=127.0.0.1",
            f"--Voila.root_dir={tmp / 'root'}", "--ServerApp.ip=127.0.0.1", "--IdentityProvider.token=",
            f"--ServerApp.root_dir={tmp / 'root'}"]
    server = _start(argv, tmp, "/", port)
    yield server
    _stop(server)
    shutil.rmtree(tmp, ignore_errors=True)


def write_notebook(path: Path, cells: list[str]) -> Path:
    """A notebook of code cells (no outputs) for the python3 kernel."""
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                     "source": c} for c in cells],
          "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
          "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(nb), encoding="utf-8")
    return path
