#!/usr/bin/env bash
# Runs the README's test command (swift test) N times on the current build and prints how many
# runs passed, with the first failure of each failed run.
#
# Usage: Tests/repeat.sh N [--busy] [-- extra swift test arguments]
#   --busy   keeps both cores busy meanwhile (two `yes > /dev/null`), as a loaded machine would.
set -uo pipefail
cd "$(dirname "$0")/.."

runs="${1:-}"
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "usage: Tests/repeat.sh N [--busy] [-- swift test arguments]" >&2; exit 64; }
shift
busy=0
extra=()
while (($#)); do
    case "$1" in
        --busy) busy=1 ;;
        --) shift; extra=("$@"); break ;;
        *) echo "unknown argument: $1" >&2; exit 64 ;;
    esac
    shift
done

swift build --build-tests >/dev/null || { echo "the build failed" >&2; exit 1; }

loaders=()
stop_loaders() { ((${#loaders[@]})) && kill "${loaders[@]}" 2>/dev/null; }
trap stop_loaders EXIT
if ((busy)); then
    for _ in 1 2; do yes >/dev/null & loaders+=($!); done
    echo "both cores kept busy by: ${loaders[*]}"
fi

log="$(mktemp -d)"
passed=0
for ((run = 1; run <= runs; run++)); do
    started=$SECONDS
    if swift test --skip-build ${extra[@]+"${extra[@]}"} >"$log/run-$run.log" 2>&1; then
        passed=$((passed + 1))
        echo "run $run: passed ($((SECONDS - started)) s; $(grep -Eo 'Test run with [0-9]+ tests' "$log/run-$run.log" | tail -n 1))"
        rm -f "$log/run-$run.log"
    else
        # The first recorded issue, else the first failed test, else how the process ended.
        first="$(grep -m 1 -E 'recorded an issue|✘ Test' "$log/run-$run.log" \
            || grep -m 1 -E 'signal|Fatal error|error:' "$log/run-$run.log" || tail -n 1 "$log/run-$run.log")"
        echo "run $run: FAILED ($((SECONDS - started)) s): $first"
        echo "         log: $log/run-$run.log"
    fi
done
echo "$passed of $runs runs passed"
((passed == runs))
