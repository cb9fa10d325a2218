#!/usr/bin/env python3
"""flexjit against its peers by time, not by TF/s (zzj).

`flexjit bench --json` and the peer scripts (../shared/bench/peers.py, offsuite_peers.py) each
count a masked problem's FLOPs with their own density. They agree where the lengths are
multiples of 128, but not elsewhere: flexjit counts the fraction of 128 x 128 blocks computed,
while the peers take FlexAttention's `BlockMask.sparsity()`, which divides the padded blocks'
area by the unpadded one (at S=257 causal 6 x 128^2 / 257^2 = 1.49, clamped to 1.0; at S=1000
0.590 against flexjit's 0.5625). Comparing TF/s then skews the ratio by their quotient (1.5x at
S=257, 1.33x at S=129, 1.05x at S=1000). This script compares medians (ms) and restates every
system's TF/s at flexjit's density, so the ratios are the times'.

usage: ratios_by_time.py FLEXJIT.jsonl [FLEXJIT2.jsonl ...] --peers PEERS.jsonl [PEERS2.jsonl ...]
(several flexjit files: each problem's best, e.g. default and tuned arms.)
"""
import json
import sys


def read(paths):
    rows = {}
    for path in paths:
        for line in open(path):
            if not line.startswith("{") or '"name"' not in line:
                continue
            o = json.loads(line)
            if "error" in o:
                continue
            rows.setdefault(o["name"], {}).setdefault(o.get("system", "flexjit"), []).append(o)
    return rows


def main(argv):
    if "--peers" not in argv:
        sys.exit(__doc__)
    cut = argv.index("--peers")
    ours, peers = read(argv[1:cut]), read(argv[cut + 1 :])
    print(f"{'problem':24s} {'flexjit fwd/bwd ms':>20s}  peer: fwd/bwd ms (their density) -> flexjit's speed-up by time")
    for name, systems in ours.items():
        runs = systems["flexjit"]
        fwd = min(r["fwd_ms"] for r in runs if "fwd_ms" in r)
        bwds = [r["bwd_ms"] for r in runs if "bwd_ms" in r]
        bwd = min(bwds) if bwds else None
        density = runs[0].get("density", 1.0)
        line = f"{name:24s} {fwd:9.4f}/{bwd if bwd else float('nan'):9.4f}  (density {density:.4f})"
        for system, prs in sorted(peers.get(name, {}).items()):
            pf = min(r["fwd_ms"] for r in prs)
            pbs = [r["bwd_ms"] for r in prs if "bwd_ms" in r]
            pb = min(pbs) if pbs else None
            line += f" | {system} {pf:.4f}/{pb if pb else float('nan'):.4f} ({prs[0].get('density', 1.0):.4f}) -> {pf / fwd:.2f}"
            if pb and bwd:
                line += f"/{pb / bwd:.2f}"
        print(line)


if __name__ == "__main__":
    main(sys.argv)
