#!/usr/bin/env bash
# CI for the Reminders example: builds it against the project by path, syncs a feed holding
# reminders and a framework, checks the printed reminders line by line, checks that an invalid
# reminder fails the run naming its JSON path and leaves the store unchanged, and reads the
# same store with the project's storectl (the built-in kinds, and the app's migration listed
# as the app's).
set -euo pipefail
cd "$(dirname "$0")"

fail() { echo "Examples/Reminders: $*" >&2; exit 1; }

swift build
bin="$(swift build --show-bin-path)"
storectl="$(cd ../.. && swift build --show-bin-path)/storectl"
[ -x "$storectl" ] || (cd ../.. && swift build --product storectl)

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
db="$work/reminders.sqlite"

"$bin/reminders" "$db" Fixtures/feed.json > "$work/out.jsonl"
diff -u Fixtures/expected.jsonl "$work/out.jsonl" || fail "the printed reminders differ from Fixtures/expected.jsonl"

# Everything but sync_history, where the library records each sync, failed ones included.
dump() { sqlite3 "$db" .dump | grep -v '^INSERT INTO sync_history '; }
dump > "$work/before.sql"
if "$bin/reminders" "$db" Fixtures/invalid.json > "$work/invalid.out" 2> "$work/invalid.err"; then
    fail "an invalid reminder was accepted"
fi
grep -q "reminders\[3\]\.title: must not be empty" "$work/invalid.err" \
    || { cat "$work/invalid.err" >&2; fail "the error does not name reminders[3].title"; }
dump > "$work/after.sql"
diff -u "$work/before.sql" "$work/after.sql" || fail "the invalid feed changed the store"

"$storectl" frameworks list --db "$db" --json > "$work/frameworks.json"
grep -q '"arkit"' "$work/frameworks.json" || fail "storectl frameworks list does not show arkit"
"$storectl" export --db "$db" > "$work/export.json"
grep -q '"arkit"' "$work/export.json" || fail "storectl export does not hold arkit"
"$storectl" migrate status --db "$db" > "$work/status.txt"
grep -Eq "^reminders/0001_create_reminders +app " "$work/status.txt" \
    || { cat "$work/status.txt" >&2; fail "migrate status does not list the app's migration as the app's"; }

echo "Examples/Reminders: ok"
