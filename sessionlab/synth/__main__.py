"""``python -m sessionlab.synth``: the generator's command line (see :mod:`sessionlab.cli`)."""

import sys

from ..cli import synth_main

if __name__ == "__main__":
    sys.exit(synth_main())
