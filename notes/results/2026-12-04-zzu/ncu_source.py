#!/usr/bin/env python3
"""Reads ncu's SASS source page (`ncu -i REP --page source --csv --print-source sass > F.csv`).

  ncu_source.py stalls F.csv [N]        stall reasons over the kernel, and the N instructions
                                        with the most samples (default 25)
  ncu_source.py regions F.csv COUNT A:B ...
                                        sampled cycles per address range (offsets from the
                                        kernel's first instruction, hex): samples divided by the
                                        mean 'selected' samples of the loop's instructions (those
                                        executed COUNT times), i.e. one issue = one cycle
(zzu used it on zzu1_ncu_fwd.tar.gz's main noop d128 kernel: regions src.csv 507904 2880:2b90
2b90:35a0 35a0:3630 3630:3640 3640:3a50 3a50:3d90 3d90:49e0.)
"""
import csv
import sys

SAMPLES = "Warp Stall Sampling (All Samples)"


def load(path):
    rows = list(csv.reader(open(path)))
    header, data = rows[1], rows[2:]
    column = {name: i for i, name in enumerate(header)}

    def value(row, name):
        try:
            return float(row[column[name]].replace(",", ""))
        except (KeyError, ValueError):
            return 0.0

    stalls = [n for n in header if n.startswith("stall_") and "Not Issued" not in n]
    return data, value, stalls


def stalls(path, top=25):
    data, value, reasons = load(path)
    total = sum(value(r, SAMPLES) for r in data)
    print("total samples", total)
    sums = {s: sum(value(r, s) for r in data) for s in reasons}
    for s, v in sorted(sums.items(), key=lambda x: -x[1])[:10]:
        print(f"{s:25s} {v:10.0f} {v / total * 100:5.1f}%")
    print("top instructions:")
    for r in sorted(data, key=lambda r: -value(r, SAMPLES))[:top]:
        worst = sorted(((value(r, x), x) for x in reasons), reverse=True)[:3]
        print(f"{r[0]:>6} {value(r, SAMPLES) / total * 100:5.2f}% {r[1][:60]:60s} " +
              " ".join(f"{x[1][6:]}={x[0]:.0f}" for x in worst))


def regions(path, loop_count, ranges):
    data, value, _ = load(path)
    base = int(data[0][0], 16)
    loop = [r for r in data if value(r, "Instructions Executed") == loop_count]
    per_issue = sum(value(r, "stall_selected") for r in loop) / len(loop)
    print(f"loop instructions executed {loop_count:.0f} times; mean 'selected' samples {per_issue:.1f}")
    for text in ranges:
        a, b = (int(x, 16) for x in text.split(":"))
        inside = [r for r in data if a <= int(r[0], 16) - base < b]
        cycles = sum(value(r, SAMPLES) for r in inside) / per_issue
        print(f"{a:#x}-{b:#x} {len(inside):4d} instructions {cycles:6.0f} cycles")


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "stalls":
        stalls(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 25)
    elif len(sys.argv) >= 5 and sys.argv[1] == "regions":
        regions(sys.argv[2], float(sys.argv[3]), sys.argv[4:])
    else:
        sys.exit(__doc__)
