"""``python -m urnkit``: the ``urnkit`` command (see :mod:`urnkit.cli`)."""

import sys

from urnkit.cli import main

if __name__ == "__main__":
    sys.exit(main())
