"""Adds files to a built wheel under the `quabla/` package and rewrites its RECORD.

    python scripts/wheel_vendor.py WHEEL SRC:DEST [SRC:DEST ...]

Used by scripts/wheel.sh for the OpenMP runtime: compiled code dlopens libomp for its
parallel loops (runtime/csrc/openmp.c looks for `libomp.so.5` beside the extension first),
so auditwheel, which vendors only DT_NEEDED libraries, does not see it. DEST is relative to
the package directory; the wheel is rewritten in place (through a temporary file)."""

import base64
import hashlib
import os
import sys
import zipfile


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def main(wheel, pairs):
    added = {}
    for pair in pairs:
        src, _, dest = pair.partition(":")
        if not dest or not os.path.isfile(src):
            sys.exit(f"wheel_vendor: {pair!r}: expected SRC:DEST with an existing SRC file")
        with open(src, "rb") as f:
            added[f"quabla/{dest}"] = (f.read(), os.stat(src).st_mode)
    tmp = wheel + ".tmp"
    with zipfile.ZipFile(wheel) as zin, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zout:
        record = next(n for n in zin.namelist() if n.endswith(".dist-info/RECORD"))
        for info in zin.infolist():
            if info.filename == record or info.filename in added:
                continue
            zout.writestr(info, zin.read(info.filename))
        lines = [l for l in zin.read(record).decode().splitlines() if l and l.split(",")[0] not in added]
        for name, (data, mode) in added.items():
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (mode & 0o777 | 0o100000) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zout.writestr(info, data)
            lines.insert(len(lines) - 1, record_line(name, data))
        zout.writestr(record, "\n".join(lines) + "\n")
    os.replace(tmp, wheel)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
