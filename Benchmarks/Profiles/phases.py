#!/usr/bin/env python3
"""Shares of a whole `storectl sync` process by phase, from `perf record --call-graph dwarf`.

Usage: phases.py BINARY PERF_DATA...  (several files: their samples are added up)

Each sample goes to one phase. Commit and checkpoint first (anything under SQLite's commit or
checkpoint, whoever called it); otherwise, walking the stack from the leaf outward, the first
frame that names a phase (so a statement run by the received-hash batch counts there, not as a
B-tree insert of the records). perf cannot read this toolchain's Swift symbols: they are resolved
with addr2line and `swift demangle`, as inclusive.py does. See sync.md.
"""
import collections, re, subprocess, sys
binary = sys.argv[1]; files = sys.argv[2:]
rules = [
 ("hash (RecordHash)", ["RecordHash"]),
 ("received hashes (sync_records)", ["ReceivedHashBatch", "SyncStateTable"]),
 ("change log text (ChangeLogTable)", ["ChangeLogTable"]),
 ("pre-update hook (ChangeCollector)", ["ChangeCollector", "PreUpdateHook"]),
 ("checkpoint + close", ["sqlite3WalCheckpoint","walCheckpoint","sqlite3_close","sqlite3LeaveMutexAndCloseZombie","sqlite3WalClose"]),
 ("commit (WAL write + fsync)", ["sqlite3VdbeHalt","sqlite3PagerCommitPhaseOne","sqlite3BtreeCommitPhaseOne", "fdatasync"]),
 ("B-tree inserts of the records", ["insertIfAbsent", "FrameworkTable", "Reconciler", "reconcile", "OrderTable", "EventTable"]),
 ("validate (decode, fields, duplicate keys)", ["FeedFields", "decode", "FeedKeyRegistry", "RecordValidation", "FeedValidator.record", "validate"]),
 ("read/parse JSON", ["JSONParser", "JSONChunkReader", "read", "FeedValidator"]),
 ("start (exec, ld.so, runtime init, arg parsing, open)", ["_dl_", "dl_main", "_dl_start", "ld-linux", "exec", "ArgumentParser", "swift_conformsToProtocol", "Migrator", "Store.open", "load_elf"]),
]
count = collections.Counter(); total = 0
for data in files:
    out = subprocess.run(["perf","script","-i",data,"-F","ip,sym,dso"],capture_output=True,text=True).stdout
    samples=[]; cur=[]
    for line in out.splitlines():
        if not line.strip():
            if cur: samples.append(cur); cur=[]
            continue
        m = re.match(r"\s*([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$", line)
        if m: cur.append(m.groups())
    if cur: samples.append(cur)
    bn = binary.split("/")[-1]
    addrs = sorted({a for s in samples for a,sym,dso in s if dso.endswith(bn) and sym=="[unknown]"})
    names={}
    if addrs:
        lines = subprocess.run(["addr2line","-f","-e",binary]+["0x"+a for a in addrs],capture_output=True,text=True).stdout.splitlines()
        names={a:lines[2*i] for i,a in enumerate(addrs)}
        dem = subprocess.run(["swift","demangle","--simplified"],input="\n".join(names.values()),capture_output=True,text=True).stdout.splitlines()
        names=dict(zip(names.keys(),dem)) if len(dem)==len(names) else names
    for s in samples:
        total += 1
        frames = [(names.get(a,sym) if sym=="[unknown]" else sym)+" "+dso for a,sym,dso in s]
        cat = None
        for name in ("checkpoint + close", "commit (WAL write + fsync)"):
            keys = dict(rules)[name]
            if any(k in f for f in frames for k in keys): cat = name
        if cat is None:
          for f in frames:
            for name, keys in rules:
                if any(k in f for k in keys): cat = name; break
            if cat: break
        if cat is None:
            leaf = frames[0]
            cat = "other kernel (page faults, reads)" if "kernel" in leaf else "other: " + ("ld.so" if "ld-linux" in leaf else leaf.split(" ")[-1])
        count[cat]+=1
for k,v in count.most_common(): print(f"{100*v/total:5.1f}%  {v:6d}  {k}")
print("total", total)
