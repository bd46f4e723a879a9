"""``python -m nca_core app`` or ``python -m nca_core train ...``: ``nca-explorer``'s commands (see ``nca_core.cli``)."""

import sys

from .cli import main

if __name__ == "__main__":  # importing the module (as a documentation build does) runs nothing
    sys.exit(main())
