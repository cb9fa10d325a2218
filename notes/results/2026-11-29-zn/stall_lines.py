#!/usr/bin/env python3
"""Stall samples of an ncu SourceCounters export per source line (how zn2 was read).

usage: stall_lines.py KERNEL.sass SOURCE.csv [LO HI]
  KERNEL.sass  `nvdisasm -g -c` of the same cubin the profiled launch ran (emit it with
               `flexjit emit ... --format cubin`; its offsets match the profile's when the spec
               matches: dtype, head dim, config, divisible, mods)
  SOURCE.csv   `ncu -i REP --page source --csv --print-source sass`
  LO HI        optional hex offsets: only the instructions in [LO, HI) (a warp role's region)
Prints the 40 source lines (file, line of the rendered kernel and its headers) with the most
"Warp Stall Sampling (All Samples)", with their share of the region's samples.
"""
import collections
import csv
import re
import sys

sass = open(sys.argv[1]).read().splitlines()
line_of = {}
current = None
for text in sass:
    where = re.search(r'//## File "([^"]+)", line (\d+)', text)
    if where:
        current = (where.group(1).split("/")[-1], int(where.group(2)))
        continue
    address = re.match(r"\s+/\*([0-9a-f]{4,})\*/", text)
    if address:
        line_of[int(address.group(1), 16)] = current
rows = list(csv.reader(open(sys.argv[2])))
header, data = rows[1], rows[2:]
column_address = header.index("Address")
column_samples = header.index("Warp Stall Sampling (All Samples)")
base = int(data[0][column_address], 16)
lo = int(sys.argv[3], 16) if len(sys.argv) > 3 else 0
hi = int(sys.argv[4], 16) if len(sys.argv) > 4 else 1 << 40
samples = collections.Counter()
total = 0
for row in data:
    offset = int(row[column_address], 16) - base
    if lo <= offset < hi:
        count = int(row[column_samples])
        total += count
        samples[line_of.get(offset)] += count
print("samples", total)
for where, count in samples.most_common(40):
    print(f"{count:8d} {100 * count / max(total, 1):5.1f}% {where}")
