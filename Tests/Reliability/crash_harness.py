#!/usr/bin/env python3
"""Crash safety: SIGKILL storectl at random moments and check the store after each kill.

For each kill: `PRAGMA integrity_check` says ok, and the store is exactly as before the
interrupted operation or exactly as after it:
  - sync of a large feed: the export equals the export before the sync or after it;
  - migrate of a new file: the applied migrations are a prefix 1..k (each migration is its own
    transaction) and the schema is exactly that of those k migrations;
  - a burst of single-record writes (one storectl process each, run in a loop): the records
    present are exactly the first k of the burst, each complete.

Usage: crash_harness.py STORECTL [--kills N] [--seed S]
N is the number of processes actually killed (an attempt whose process finished first does
not count; attempts are bounded at 4 per kill): $STORE_CRASH_KILLS or 24 (CI); the full run
uses 120.
"""
import argparse
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time


def run(args, env, check=True, **kwargs):
    result = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120, **kwargs)
    if check and result.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({result.returncode}): {result.stderr}")
    return result


def integrity(path):
    connection = sqlite3.connect(path)
    try:
        return connection.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        connection.close()


def copy_store(source, target):
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(target + suffix):
            os.remove(target + suffix)
        if os.path.exists(source + suffix):
            shutil.copyfile(source + suffix, target + suffix)


def kill_at_random(args, env, longest):
    """Starts args, SIGKILLs it after a random delay (it may finish first); returns True if killed."""
    process = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(random.uniform(0, longest))
    killed = process.poll() is None
    if killed:
        process.send_signal(signal.SIGKILL)
    process.wait(timeout=60)
    return killed


def write_feed(path, count, offset=0):
    frameworks = [{
        "id": f"fw-{i:07d}", "name": f"Framework {i}", "imageName": f"framework-{i}",
        "urlString": f"https://developer.apple.com/documentation/fw-{i:07d}",
        "description": f"Framework {i} does one thing well, quickly, safely, and is documented and tested.",
    } for i in range(offset, offset + count)]
    events = [{"id": f"e-{i}", "title": f"Event {i}", "date": f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}"}
              for i in range(count // 10)]
    with open(path, "w") as feed:
        json.dump({"version": 1, "frameworks": frameworks, "events": events}, feed)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("storectl")
    parser.add_argument("--kills", type=int, default=int(os.environ.get("STORE_CRASH_KILLS", "24")))
    parser.add_argument("--seed", type=int, default=int(time.time()))
    options = parser.parse_args()
    random.seed(options.seed)
    storectl = os.path.abspath(options.storectl)
    work = tempfile.mkdtemp(prefix="store-crash-")
    env = dict(os.environ)
    env.pop("STORECTL_DB", None)
    per_kind = max(1, options.kills // 3)
    failures = []
    killed = {"sync": 0, "migrate": 0, "writes": 0}
    try:
        # --- sync ---------------------------------------------------------------------------
        base, target, feed = f"{work}/base.sqlite", f"{work}/target.sqlite", f"{work}/feed.json"
        write_feed(f"{work}/seed.json", 2000)
        run([storectl, "sync", f"{work}/seed.json", "--db", base, "--quiet"], env)
        write_feed(feed, int(os.environ.get("STORE_CRASH_RECORDS", "20000")), offset=1000)  # overlaps the seed
        before = run([storectl, "export", "--db", base], env).stdout
        copy_store(base, target)
        started = time.monotonic()
        run([storectl, "sync", feed, "--db", target, "--quiet"], env)
        duration = time.monotonic() - started
        after = run([storectl, "export", "--db", target], env).stdout
        assert before != after
        for attempt in range(per_kind * 4):
            if killed["sync"] >= per_kind:
                break
            copy_store(base, target)
            killed["sync"] += kill_at_random([storectl, "sync", feed, "--db", target, "--quiet"], env, duration * 1.1)
            check = integrity(target)
            state = run([storectl, "export", "--db", target], env).stdout
            if check != "ok" or state not in (before, after):
                failures.append(f"sync kill {attempt}: integrity {check}, state {'before' if state == before else 'after' if state == after else 'IN BETWEEN'}")

        # --- migrate ------------------------------------------------------------------------
        migrations = sorted(name for name in os.listdir(os.path.join(os.path.dirname(__file__), "../../Migrations")) if name.endswith(".sql"))
        schemas = {}
        for attempt in range(per_kind * 4):
            if killed["migrate"] >= per_kind:
                break
            path = f"{work}/migrate-{attempt}.sqlite"
            killed["migrate"] += kill_at_random([storectl, "migrate", "--db", path], env, 0.08)
            if not os.path.exists(path):
                continue
            check = integrity(path)
            connection = sqlite3.connect(path)
            try:
                tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
                applied = [row[0] for row in connection.execute("SELECT version FROM schema_migrations ORDER BY version")] if "schema_migrations" in tables else []
                schema = sorted(row for row in connection.execute(
                    "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' AND name != 'schema_migrations'"))
            finally:
                connection.close()
            k = len(applied)
            if k not in schemas:
                reference = f"{work}/reference-{k}.sqlite"
                connection = sqlite3.connect(reference)
                for name in migrations[:k]:
                    connection.executescript(open(os.path.join(os.path.dirname(__file__), "../../Migrations", name)).read())
                schemas[k] = sorted(row for row in connection.execute(
                    "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"))
                connection.close()
            if check != "ok" or applied != list(range(1, k + 1)) or schema != schemas[k]:
                failures.append(f"migrate kill {attempt}: integrity {check}, applied {applied}, schema matches: {schema == schemas[k]}")

        # --- a burst of writes --------------------------------------------------------------
        burst = f"{work}/burst.sqlite"
        run([storectl, "migrate", "--db", burst], env)
        empty = f"{work}/burst-empty.sqlite"
        copy_store(burst, empty)
        script = f"{work}/burst.sh"
        with open(script, "w") as handle:
            handle.write("#!/bin/sh\nset -e\n")
            for i in range(40):
                handle.write(f"'{storectl}' frameworks add --db '{burst}' --id w-{i:03d} --name 'Write {i}' "
                             f"--image-name w{i} --url https://example.com/{i} --description 'burst write {i}' >/dev/null\n")
        os.chmod(script, 0o755)
        for attempt in range(per_kind * 4):
            if killed["writes"] >= per_kind:
                break
            copy_store(empty, burst)
            process = subprocess.Popen(["/bin/sh", script], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
            time.sleep(random.uniform(0, 1.5))
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                killed["writes"] += 1
            process.wait(timeout=60)
            check = integrity(burst)
            frameworks = json.loads(run([storectl, "frameworks", "list", "--json", "--db", burst], env).stdout)
            ids = [f["id"] for f in frameworks]
            complete = all(f["name"] == f"Write {int(f['id'][2:])}" and f["description"] == f"burst write {int(f['id'][2:])}" for f in frameworks)
            if check != "ok" or ids != [f"w-{i:03d}" for i in range(len(ids))] or not complete:
                failures.append(f"writes kill {attempt}: integrity {check}, ids {ids[:5]}..., complete {complete}")
    finally:
        shutil.rmtree(work, ignore_errors=True)

    total = sum(killed.values())
    print(f"crash harness (seed {options.seed}): {total} kills (sync {killed['sync']}, migrate {killed['migrate']}, "
          f"writes {killed['writes']}), {len(failures)} failures")
    for failure in failures:
        print("  " + failure)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
