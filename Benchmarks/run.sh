#!/usr/bin/env bash
# Builds storectl and the benchmark in release mode and prints the results table.
# Usage: Benchmarks/run.sh [--n N] [--runs R] [--memory] [--only ID[,ID...]] [--json FILE]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
swift build -c release --package-path "$here/.." --product storectl >&2
swift build -c release --package-path "$here" --scratch-path "$here/.build" >&2
exec "$here/.build/release/StoreBenchmarks" --storectl "$(swift build -c release --package-path "$here/.." --show-bin-path)/storectl" "$@"
