"""``python -m nca_core train ...`` (see ``nca_core.cli``)."""

import sys

from .cli import main

sys.exit(main())
