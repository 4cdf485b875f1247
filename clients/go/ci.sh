#!/usr/bin/env bash
# CI for the Go client: go vet, the tests under the race detector (they start
# a real PocketBase through ../../scripts/pocketbase/serve-for-tests.mjs;
# PB_VERSION picks the version), and, given a path as $1, the conformance
# worker built there.  Usage: clients/go/ci.sh [path/to/pb-fleet-conformance]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

if ! command -v go >/dev/null 2>&1; then
  echo "ci.sh: go is not on PATH: install Go 1.22 or later (https://go.dev/dl/)" >&2
  exit 1
fi

step() {
  local name=$1
  shift
  local start=$SECONDS
  echo "== $name"
  "$@"
  echo "== $name: $((SECONDS - start)) s"
}

total=$SECONDS
unformatted=$(gofmt -l .)
if [[ -n $unformatted ]]; then
  echo "ci.sh: not gofmt-formatted: $unformatted" >&2
  exit 1
fi
step "go vet" go vet ./...
step "go test -race (PocketBase ${PB_VERSION:-0.22.21})" go test -race -count=1 ./...
if [[ $# -ge 1 && -n $1 ]]; then
  out=$1
  [[ $out == /* ]] || out="$OLDPWD/$out" # relative to where ci.sh was called from
  step "build the conformance worker -> $out" go build -o "$out" ./cmd/pb-fleet-conformance
fi
echo "== ci.sh: passed in $((SECONDS - total)) s"
