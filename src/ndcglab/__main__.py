"""``python -m ndcglab ...``: the ``ndcglab`` command line (see :mod:`ndcglab.cli.main`)."""

import sys

from .cli.main import main

sys.exit(main())
