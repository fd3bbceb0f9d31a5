"""Build the optional native scanner (sessionlab._scan); everything else is in pyproject.toml.

The extension is optional: where it cannot be compiled the loader uses its pure-Python fast path.
Before building, ``sessionlab/_scan_rules.h`` is generated from pi's token rule as declared in
``sessionlab/pi/rules.py``, with the hash of the scanner's sources (see ``sessionlab/_scan_source.py``);
the loader refuses an extension whose hash is not the one of the sources it ships.
"""

import importlib.util
import sys
from pathlib import Path

from setuptools import Extension, setup

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("_scan_source", HERE / "sessionlab" / "_scan_source.py")
scan_source = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(scan_source)
scan_source.write_rules_header(HERE / "sessionlab")

args = [] if sys.platform == "win32" else ["-O3", "-std=c11"]
scan = Extension(
    "sessionlab._scan",
    ["sessionlab/_scan.c"],
    depends=[f"sessionlab/{name}" for name in (*scan_source.SOURCES[1:], scan_source.HEADER)]
    + ["sessionlab/pi/rules.py", "sessionlab/_scan_source.py"],
    optional=True,
    extra_compile_args=args,
)
setup(ext_modules=[scan])
