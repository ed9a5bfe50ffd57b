"""``quabla._opt.main``: the ``quabla-opt`` command as a function of the package (the console
script is the top-level ``_quabla_opt.main``, which loads only the extension)."""

import sys

from _quabla_opt import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
