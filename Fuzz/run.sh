#!/usr/bin/env bash
# Builds the feed fuzzer with libFuzzer and runs it: Fuzz/run.sh [SECONDS] (default 30).
# Crashes are written to Fuzz/Regressions/ (copy each into a regression test's folder:
# Tests/StoreTests/FuzzRegressionTests.swift replays every file there).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
seconds="${1:-30}"
swift build -c release --package-path "$here" --scratch-path "$here/.build" >&2
corpus="$(mktemp -d)"
trap 'rm -rf "$corpus"' EXIT
cp "$here"/Corpus/* "$corpus"/
"$here/.build/release/FeedFuzzer" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
    -artifact_prefix="$here/Regressions/" "$corpus" "$here/Corpus"
