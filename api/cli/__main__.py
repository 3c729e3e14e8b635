"""``python -m api.cli``: the ``catalog`` command line."""

import sys

from api.cli import main

sys.exit(main())
