#!/usr/bin/env bash
# Lists the public declarations of the Store module that have no doc comment of their own,
# as FILE:LINE: KIND NAME, from the compiler's symbol graph (so enum cases, members of public
# types and extensions count, and protocol witnesses that inherit a protocol's documentation
# do not). Exit 1 if more than N are found (--max N; 0 by default, so any fails), 2 if the
# symbol graph cannot be made; pass --count to print only the number.
#   .ci/undocumented-public.sh [--count] [--max N] [PATH-PREFIX...]   e.g. Sources/Store/SQLite
# CI can hold the line while declarations are still being documented: --max with today's count.
set -euo pipefail
cd "$(dirname "$0")/.."
count_only=0
max=0
while [ $# -gt 0 ]; do
    case "$1" in
        --count) count_only=1; shift ;;
        --max)
            [[ "${2:-}" =~ ^[0-9]+$ ]] || { echo "--max needs a number of declarations, got '${2:-}'" >&2; exit 2; }
            max="$2"; shift 2 ;;
        --max=*)
            max="${1#--max=}"
            [[ "$max" =~ ^[0-9]+$ ]] || { echo "--max needs a number of declarations, got '$max'" >&2; exit 2; }
            shift ;;
        --) shift; break ;;
        -*) echo "unknown option $1 (use --count, --max N, then path prefixes)" >&2; exit 2 ;;
        *) break ;;
    esac
done
# The tool also tries the test modules and exits 1 when they are not built yet; only the
# Store module's graph matters here, so its file is what is checked.
out="$(swift package dump-symbol-graph --minimum-access-level public 2>&1 || true)"
dir="$(printf '%s\n' "$out" | sed -n 's/^Files written to //p' | tail -n 1)"
[ -n "$dir" ] || dir="$PWD/.build/$(uname -m)-unknown-linux-gnu/symbolgraph"
[ -f "$dir/Store.symbols.json" ] || { printf 'no symbol graph for Store:\n%s\n' "$out" | tail -n 20 >&2; exit 2; }
python3 - "$dir" "$PWD" "$count_only" "$max" "$@" <<'PY'
import glob, json, os, sys
directory, root, count_only, maximum, prefixes = sys.argv[1], sys.argv[2], sys.argv[3] == "1", int(sys.argv[4]), sys.argv[5:]
found = set()
paths = glob.glob(os.path.join(directory, "Store.symbols.json")) + glob.glob(os.path.join(directory, "Store@*.symbols.json"))
for path in paths:
    graph = json.load(open(path))
    for symbol in graph["symbols"]:
        if symbol.get("accessLevel") != "public":
            continue
        location = symbol.get("location", {})
        uri = location.get("uri", "")
        if not uri.startswith("file://"):
            continue  # synthesized (memberwise Equatable, Codable, ...)
        file = os.path.relpath(uri[len("file://"):], root)
        if prefixes and not any(file.startswith(p) for p in prefixes):
            continue
        doc = symbol.get("docComment")
        if doc and doc.get("module", "Store") == "Store" and doc.get("lines"):
            continue
        if doc and doc.get("module") not in (None, "Store"):
            continue  # a protocol witness documented by its protocol (description, init(from:), ...)
        line = location.get("position", {}).get("line", 0) + 1
        kind = symbol["kind"]["displayName"]
        title = ".".join(symbol["pathComponents"])
        found.add((file, line, kind, title))
for file, line, kind, title in sorted(found):
    if not count_only:
        print(f"{file}:{line}: {kind} {title}")
print(f"{len(found)} undocumented public declarations" if not count_only else len(found))
if len(found) > maximum:
    print(f"more than the {maximum} allowed (--max {maximum})", file=sys.stderr)
    sys.exit(1)
sys.exit(0)
PY
