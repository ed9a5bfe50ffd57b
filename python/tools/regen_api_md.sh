#!/bin/sh
# Rewrites docs/api.md's reference part (below `<!-- reference -->`) from the docstrings.
set -e
root=$(cd "$(dirname "$0")/../.." && pwd)
py=${PYTHON:-$root/.venv/bin/python}
ref=$("$py" "$root/python/tools/gen_api_docs.py")
guide=$(sed '/^<!-- reference -->$/q' "$root/docs/api.md")
printf '%s\n%s\n' "$guide" "$ref" > "$root/docs/api.md"
