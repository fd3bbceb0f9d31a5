"""Build the optional native scanner (sessionlab._scan); everything else is in pyproject.toml.

The extension is optional: where it cannot be compiled the loader uses its pure-Python fast path.
"""

import sys

from setuptools import Extension, setup

args = [] if sys.platform == "win32" else ["-O3", "-std=c11"]
scan = Extension(
    "sessionlab._scan",
    ["sessionlab/_scan.c"],
    depends=["sessionlab/_scan_json.h", "sessionlab/_scan_fields.h", "sessionlab/_scan_rows.h"],
    optional=True,
    extra_compile_args=args,
)
setup(ext_modules=[scan])
