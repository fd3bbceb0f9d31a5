"""``python -m sessionlab``: the command line (see :mod:`sessionlab.cli`)."""

from .cli import run

if __name__ == "__main__":
    run()
