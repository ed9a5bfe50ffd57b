# Sourced by the other scripts: toolchain locations for MLIR/LLVM 22 and the venv.
export LLVM_PREFIX=/usr/lib/llvm-22
export MLIR_SYS_220_PREFIX=$LLVM_PREFIX
export TABLEGEN_220_PREFIX=$LLVM_PREFIX
export LIBCLANG_PATH=$LLVM_PREFIX/lib
export PATH="$LLVM_PREFIX/bin:$HOME/.cargo/bin:$PATH"
export QUABLA_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export QUABLA_VENV="$QUABLA_ROOT/.venv"
