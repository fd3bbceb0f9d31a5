"""Driving JupyterLab from Playwright: open a notebook, run it, read its outputs."""

from __future__ import annotations

from typing import Any

KERNEL_IDLE = """() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return !!k && k.status === 'idle';
}"""

ALL_RAN = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  const k = w.sessionContext.session && w.sessionContext.session.kernel;
  if (!k || k.status !== 'idle') return false;
  return w.content.widgets.every(c => c.model.type !== 'code' || c.model.sharedModel.getSource().trim() === ''
                                      || c.model.executionCount !== null);
}"""


def open_and_run(page: Any, server: Any, name: str, *, timeout: float = 120_000) -> None:
    """Open ``name`` (in the server's root) in JupyterLab, run every cell, wait until all ran."""
    page.goto(f"{server.url}/lab/tree/{name}?reset")
    page.wait_for_function(KERNEL_IDLE, timeout=timeout)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_timeout(300)
    page.wait_for_function(ALL_RAN, timeout=timeout)


def kernel_errors(page: Any) -> list[str]:
    """Text of the error and stderr outputs of the open notebook."""
    return page.evaluate("""() => {
      const out = [];
      for (const c of window.jupyterapp.shell.currentWidget.content.widgets) {
        if (c.model.type !== 'code') continue;
        const o = c.model.outputs;
        for (let i = 0; i < o.length; i++) {
          const j = o.get(i).toJSON();
          if (j.output_type === 'error') out.push(j.ename + ': ' + j.evalue);
          if (j.output_type === 'stream' && j.name === 'stderr') out.push(String(j.text));
        }
      }
      return out;
    }""")


def cell_output(page: Any, index: int) -> Any:
    """The DOM node (Locator) of the output area of code cell ``index``."""
    return page.locator(".jp-Notebook .jp-Cell").nth(index).locator(".jp-OutputArea")
