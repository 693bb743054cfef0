#!/usr/bin/env python3
"""Inclusive and self shares of a `perf record -g` profile, by function.

perf cannot read this toolchain's Swift symbols; this resolves the binary's addresses with
addr2line and demangles them with `swift demangle`.
Usage: inclusive.py PERF_DATA BINARY [SUBSTRING]  (SUBSTRING: keep only samples whose stack
holds a frame whose mangled or C name contains it)
"""
import collections
import re
import subprocess
import sys

data, binary = sys.argv[1], sys.argv[2]
must = sys.argv[3] if len(sys.argv) > 3 else ""
out = subprocess.run(["perf", "script", "-i", data, "-F", "ip,sym,dso"], capture_output=True, text=True).stdout
samples, current = [], []
for line in out.splitlines():
    if not line.strip():
        if current:
            samples.append(current)
            current = []
        continue
    match = re.match(r"\s*([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$", line)
    if match:
        current.append(match.groups())
if current:
    samples.append(current)
binary_name = binary.split("/")[-1]
addresses = sorted({a for s in samples for a, sym, dso in s if dso.endswith(binary_name) and sym == "[unknown]"})
lines = subprocess.run(
    ["addr2line", "-f", "-e", binary] + ["0x" + a for a in addresses], capture_output=True, text=True
).stdout.splitlines()
names = {a: lines[2 * i] for i, a in enumerate(addresses)}
stacks = [[names.get(a, sym) if sym == "[unknown]" else sym for a, sym, dso in s] for s in samples]
if must:
    stacks = [s for s in stacks if any(must in frame for frame in s)]
total = max(1, len(stacks))
inclusive, self_ = collections.Counter(), collections.Counter()
for stack in stacks:
    self_[stack[0]] += 1
    for frame in set(stack):
        inclusive[frame] += 1
shown = list({n for n, _ in inclusive.most_common(70)} | {n for n, _ in self_.most_common(40)})
demangled = subprocess.run(
    ["swift", "demangle", "--simplified", "--compact"], input="\n".join(shown), capture_output=True, text=True
).stdout.splitlines()
readable = dict(zip(shown, demangled))
print("samples", len(stacks))
print("== inclusive")
for name, count in inclusive.most_common(70):
    print(f"{100 * count / total:6.1f}% {readable.get(name, name)[:150]}")
print("== self")
for name, count in self_.most_common(40):
    print(f"{100 * count / total:6.1f}% {readable.get(name, name)[:150]}")
