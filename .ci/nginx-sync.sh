#!/usr/bin/env bash
# Publishes a store as paged feed files, serves them with nginx on 127.0.0.1 and syncs them:
# the first sync applies every page, the second is up to date through ETag revalidation.
# Then a published feed (version 2, `storectl publish`): nginx serves it with Cache-Control
# immutable on everything but the manifest; after one change and a re-publish, the client's
# second sync fetches the manifest and one segment (proved from nginx's access log) and ends
# byte-identical to the source.
set -euo pipefail
cd "$(dirname "$0")/.."
storectl="$(swift build --show-bin-path)/storectl"
work="$(mktemp -d)"
trap 'nginx -p "$work" -c "$work/nginx.conf" -s stop 2>/dev/null || true; rm -rf "$work"' EXIT

# A source store: the example feed plus events and an order, exported as pages of 5 records.
export STORECTL_DB="$work/source.sqlite"
"$storectl" sync Examples/apple-frameworks.json --quiet >/dev/null
"$storectl" events add --id e-1 --title "WWDC keynote" --date 2026-06-08 >/dev/null
"$storectl" orders add --id o-1 --placed-at 2026-11-20T09:30:00Z --item Milk:2.49:3:2 >/dev/null
mkdir -p "$work/www"
"$storectl" export --page-size 5 --out "$work/www" 2>/dev/null
chmod -R a+rX "$work"
pages=$(ls "$work/www" | wc -l)

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat > "$work/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 64; }
http {
    log_format bytes '\$request_uri \$status \$body_bytes_sent';
    access_log $work/access.log bytes;
    client_body_temp_path $work/tmp;
    proxy_temp_path $work/tmp;
    fastcgi_temp_path $work/tmp;
    uwsgi_temp_path $work/tmp;
    scgi_temp_path $work/tmp;
    server {
        listen 127.0.0.1:$port;
        root $work/www;
        etag on;
        # A published folder: every file is named by its content, so cached forever, except
        # the manifest, which clients revalidate on every sync.
        location /pub/ {
            add_header Cache-Control "public, max-age=31536000, immutable";
        }
        location = /pub/manifest.json {
            add_header Cache-Control "no-cache";
        }
    }
}
CONF
mkdir -p "$work/tmp"
nginx -p "$work" -c "$work/nginx.conf"
for _ in $(seq 50); do python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null && break; sleep 0.1; done

export STORECTL_DB="$work/client.sqlite"
first=$("$storectl" sync "http://127.0.0.1:$port/feed.json" --json --quiet)
second=$("$storectl" sync "http://127.0.0.1:$port/feed.json" --json --quiet)
python3 - "$first" "$second" "$pages" <<'PY'
import json, sys
first, second, pages = json.loads(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3])
assert first["status"] == "applied", first
assert first["frameworks"]["inserted"] == 16, first
assert first["events"]["inserted"] == 1 and first["orders"]["inserted"] == 1, first
assert second["status"] == "up-to-date", second
print(f"nginx: first sync applied {pages} pages (16 frameworks, 1 event, 1 order); second sync up-to-date via ETag")
PY
grep -q ' 304 ' "$work/access.log" || { echo "nginx never answered 304"; exit 1; }
cmp <("$storectl" export) <(STORECTL_DB="$work/source.sqlite" "$storectl" export) && echo "nginx: client export identical to source export"

# A published feed. The client syncs it, the source changes one record and re-publishes, and
# the client's second sync reads the manifest and one segment only.
export STORECTL_DB="$work/source.sqlite"
"$storectl" publish "$work/www/pub" >/dev/null
chmod -R a+rX "$work/www"
base="http://127.0.0.1:$port/pub"
curl -sfI "$base/manifest.json" | grep -qi '^cache-control: no-cache' || { echo "the manifest is not served no-cache"; exit 1; }
snapshot=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["snapshot"]["files"][0]["name"])' "$work/www/pub/manifest.json")
curl -sfI "$base/$snapshot" | grep -qi '^cache-control: .*immutable' || { echo "snapshot files are not served immutable"; exit 1; }
export STORECTL_DB="$work/published-client.sqlite"
"$storectl" sync "$base/manifest.json" --policy prefer-remote --quiet >/dev/null
STORECTL_DB="$work/source.sqlite" "$storectl" frameworks update arkit --name "ARKit (edited)" >/dev/null
STORECTL_DB="$work/source.sqlite" "$storectl" publish "$work/www/pub" >/dev/null
chmod -R a+rX "$work/www"
lines=$(wc -l < "$work/access.log")
"$storectl" sync "$base/manifest.json" --policy prefer-remote --quiet >/dev/null
tail -n +"$((lines + 1))" "$work/access.log" > "$work/second-sync.log"
python3 - "$work/second-sync.log" <<'PY'
import sys
requests = [line.split() for line in open(sys.argv[1]) if line.strip()]
paths = [r[0] for r in requests]
assert len(requests) == 2, f"expected the manifest and one segment, got {paths}"
assert paths[0] == "/pub/manifest.json" and requests[0][1] == "200", requests
assert paths[1].startswith("/pub/segment-") and requests[1][1] == "200", requests
moved = sum(int(r[2]) for r in requests)
print(f"nginx: published feed re-synced with {len(requests)} requests (manifest + one segment), {moved} body bytes")
PY
cmp <("$storectl" export) <(STORECTL_DB="$work/source.sqlite" "$storectl" export) && echo "nginx: published-feed client export identical to source export"
