#!/usr/bin/env bash
# Execute every paper's notebooks under the `smoke` profile with papermill
# (python -m fedlib.repro.regenerate) and fail if any notebook fails.  Outputs and the
# results store go to a temporary folder, so the tracked figures/ stay untouched.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
export FEDLIB_STORE="$tmp/store"
export MPLBACKEND=Agg
python -m fedlib.repro.regenerate --profile smoke --figures "$tmp/figures" "$@"
test -s "$tmp/figures/README.md"
echo "smoke notebooks: OK"
