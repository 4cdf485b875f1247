#!/usr/bin/env bash
# CI for the Python client: a fresh venv, the wheel built and installed (not the source tree),
# mypy --strict of the installed package, pytest against it (real PocketBase; PB_VERSION picks it).
# Usage: clients/python/ci.sh [VENV_DIR]   (VENV_DIR is created or reused; default: a temp dir, removed after)
set -euo pipefail

started=$(date +%s)
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="${PYTHON:-python3}"

if ! command -v "$python" >/dev/null 2>&1; then
  echo "ci.sh: $python was not found: the Python client needs Python >= 3.9 to be tested (set PYTHON=...)." >&2
  exit 1
fi
if ! "$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 9) else 1)'; then
  echo "ci.sh: $("$python" --version 2>&1) is too old: the Python client needs Python >= 3.9." >&2
  exit 1
fi

work="$(mktemp -d)"
venv="${1:-$work/venv}"
cleanup() {
  status=$?
  rm -rf "$work"
  [ "$status" -eq 0 ] || echo "ci.sh: FAILED (exit $status) after $(( $(date +%s) - started )) s" >&2
}
trap cleanup EXIT

if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
vpy="$venv/bin/python"
"$vpy" -m pip install --quiet --upgrade pip
"$vpy" -m pip install --quiet build pytest mypy

# Build from a copy, so no build/ or *.egg-info is left in the source tree.
mkdir "$work/source"
cp -r "$here/src" "$here/pyproject.toml" "$here/README.md" "$work/source/"
"$vpy" -m build --wheel --outdir "$work/dist" "$work/source" >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 1; }
wheel="$(ls "$work"/dist/pb_fleet-*.whl)"
"$vpy" -m pip install --quiet --force-reinstall --no-deps "$wheel"

# The installed package, not src/: run from a directory without it on sys.path.
mkdir "$work/run" && cd "$work/run"
installed="$("$vpy" -c 'import pb_fleet, os; print(os.path.dirname(pb_fleet.__file__))')"
case "$installed" in
  "$here"/*) echo "ci.sh: pb_fleet was imported from the source tree ($installed), not the wheel" >&2; exit 1 ;;
esac
test -f "$installed/py.typed" || { echo "ci.sh: the wheel has no py.typed" >&2; exit 1; }
echo "ci.sh: testing $(basename "$wheel") installed at $installed (PB_VERSION=${PB_VERSION:-0.22.21})"

"$vpy" -m mypy --strict --no-incremental -p pb_fleet   # PEP 561: the installed, typed package

cp -r "$here/tests" "$work/run/tests"
PB_FLEET_REPO="$(cd "$here/../.." && pwd)" PB_FLEET_EXPECT_INSTALLED="$installed" "$vpy" -m pytest -q -p no:cacheprovider \
  --import-mode=importlib --rootdir "$work/run/tests" "$work/run/tests"

echo "ci.sh: passed in $(( $(date +%s) - started )) s"
