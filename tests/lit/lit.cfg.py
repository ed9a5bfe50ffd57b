# lit configuration for the golden quabla-opt tests (RUN lines pipe into FileCheck-22).
import os
import lit.formats

config.name = "quabla"
config.test_format = lit.formats.ShTest(True)
config.suffixes = [".mlir"]
config.excludes = ["Inputs", "bad"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(os.path.dirname(__file__), "Output")
root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
profile = os.environ.get("QUABLA_PROFILE", "debug")
config.environment["PATH"] = os.pathsep.join([os.path.join(root, "target", profile), "/usr/lib/llvm-22/bin", os.environ.get("PATH", "")])
config.substitutions.append(("%irdl", os.path.join(root, "dialect", "quabla.irdl.mlir")))
