"""The fuzz suites run with a small tensor size limit (256 MiB) so that hostile shapes are
refused by the size check instead of allocated; set before quabla is imported."""

import os
import sys

os.environ.setdefault("QUABLA_MAX_BYTES", str(1 << 28))
sys.path.insert(0, os.path.dirname(__file__))
