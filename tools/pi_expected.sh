#!/usr/bin/env bash
# Regenerate (or check) tests/data/pi/expected-1.6 by running pi 1.6.0's own code.
#
#   tools/pi_expected.sh [--check] [--in DIR] [--out DIR]
#
# Installs @earendil-works/pi-coding-agent@1.6.0 into a temporary folder (npm install --prefix),
# then runs tools/pi_expected.mjs on every .jsonl under --in (default tests/data/pi).
# --out defaults to a new temporary folder (printed at the end).
# --check: afterwards compare --out with the committed tests/data/pi/expected-1.6 byte for byte
#          (diff -r, README.md excluded); exit status 1 if anything differs.
# Needs node and npm; nothing in the test suite or CI runs this.
set -euo pipefail

PI_PACKAGE="@earendil-works/pi-coding-agent"
PI_VERSION="1.6.0"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
committed="$repo/tests/data/pi/expected-1.6"

check=0
in_dir="$repo/tests/data/pi"
out_dir=""
while [ $# -gt 0 ]; do
    case "$1" in
        --check) check=1; shift ;;
        --in) in_dir="$2"; shift 2 ;;
        --out) out_dir="$2"; shift 2 ;;
        *) echo "usage: $0 [--check] [--in DIR] [--out DIR]" >&2; exit 2 ;;
    esac
done
if [ -z "$out_dir" ]; then
    out_dir="$(mktemp -d "${TMPDIR:-/tmp}/pi-expected-out.XXXXXX")"
fi

prefix="$(mktemp -d "${TMPDIR:-/tmp}/pi-expected-npm.XXXXXX")"
trap 'rm -rf "$prefix"' EXIT
echo "installing $PI_PACKAGE@$PI_VERSION into $prefix" >&2
# --ignore-scripts: only the package's JavaScript is needed, no install hooks of its dependencies.
npm install --prefix "$prefix" --ignore-scripts --no-audit --no-fund --loglevel=error \
    "$PI_PACKAGE@$PI_VERSION" >&2

node "$here/pi_expected.mjs" --pi "$prefix/node_modules/$PI_PACKAGE" --in "$in_dir" --out "$out_dir"

if [ "$check" = 1 ]; then
    if diff -r --exclude=README.md "$committed" "$out_dir" >/dev/null; then
        n="$(find "$out_dir" -name '*.json' | wc -l)"
        echo "identical: $n files in $out_dir equal $committed byte for byte"
    else
        diff -rq --exclude=README.md "$committed" "$out_dir" || true
        echo "DIFFERENT: see above" >&2
        exit 1
    fi
fi
