"""``python -m sessionlab``: the command line (see :mod:`sessionlab.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
