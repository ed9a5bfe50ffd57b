"""The ``quabla-opt`` console command: runs the ``quabla-opt`` driver compiled into the
extension module (``quabla._quabla.opt_main``, the ``quabla-opt`` crate's library), so an
installed wheel has the command without shipping a second copy of MLIR in a binary.

A top-level module, so that the command loads only the extension: importing anything inside
the ``quabla`` package first runs ``quabla/__init__.py`` (NumPy and the whole API, seconds on
a loaded machine), which the driver does not need. ``quabla._opt.main`` is the same function.
"""

import importlib.machinery
import importlib.util
import os
import sys


def _extension():
    """The module ``quabla._quabla``, loaded from the installed package without importing the
    package itself (or the already imported one)."""
    if "quabla._quabla" in sys.modules:
        return sys.modules["quabla._quabla"]
    spec = importlib.util.find_spec("quabla")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("quabla-opt: the quabla package is not installed")
    for d in spec.submodule_search_locations:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = os.path.join(d, "_quabla" + suffix)
            if os.path.isfile(path):
                loader = importlib.machinery.ExtensionFileLoader("quabla._quabla", path)
                module = importlib.util.module_from_spec(importlib.util.spec_from_file_location("quabla._quabla", path, loader=loader))
                loader.exec_module(module)
                # Registered, so a later `import quabla` reuses it (a PyO3 module initialises
                # once per interpreter).
                sys.modules["quabla._quabla"] = module
                return module
    raise ImportError(f"quabla-opt: no extension module quabla/_quabla{importlib.machinery.EXTENSION_SUFFIXES[0]} in {spec.submodule_search_locations}")


def main(argv=None):
    """Entry point of the ``quabla-opt`` console script: runs the driver on ``argv`` (default
    ``sys.argv``) and returns its exit code."""
    import signal

    opt_main = _extension().opt_main
    # As a command, signals act as on the binary: Ctrl-C ends a long run at once (Python's
    # handler would only set a flag that the Rust driver never looks at), and a closed pipe
    # (`quabla-opt ... | head`) ends the process quietly instead of an EPIPE error.
    if argv is None:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        if hasattr(signal, "SIGPIPE"):
            signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.stdout.flush()
    sys.stderr.flush()
    return opt_main(list(sys.argv if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
