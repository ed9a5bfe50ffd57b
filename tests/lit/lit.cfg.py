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
# The CUDA lowering needs libdevice from the nvidia-cuda-nvcc-cu12 wheel (requirements-dev.txt).
import glob
if os.environ.get("QUABLA_CUDA_NVCC") or glob.glob(os.path.join(root, ".venv", "lib", "python3*", "site-packages", "nvidia", "cuda_nvcc", "nvvm", "libdevice", "libdevice.10.bc")):
    config.available_features.add("cuda-nvcc")
if os.environ.get("QUABLA_CUDA_NVCC"):
    config.environment["QUABLA_CUDA_NVCC"] = os.environ["QUABLA_CUDA_NVCC"]
