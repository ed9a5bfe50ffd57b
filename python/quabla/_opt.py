"""The ``quabla-opt`` console command: runs the ``quabla-opt`` binary shipped with the package
(``quabla/bin/quabla-opt``, copied there by ``python/build_opt.sh`` before a wheel is built),
or, in a development checkout, the one cargo built in the workspace's ``target/`` directory.
``QUABLA_OPT=/path/to/quabla-opt`` overrides both.
"""

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def binary():
    """The path of the quabla-opt executable, or None."""
    env = os.environ.get("QUABLA_OPT")
    cands = [env] if env else []
    cands.append(os.path.join(_HERE, "bin", "quabla-opt"))
    root = os.path.dirname(os.path.dirname(_HERE))
    cands += [os.path.join(root, "target", p, "quabla-opt") for p in ("release", "debug")]
    for c in cands:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


def main():
    """Entry point of the ``quabla-opt`` console script."""
    exe = binary()
    if exe is None:
        sys.stderr.write(
            "quabla-opt: the binary is not part of this installation; build it with "
            "`cargo build --release -p quabla-opt` (or set QUABLA_OPT)\n"
        )
        return 2
    os.execv(exe, [exe] + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
