#!/usr/bin/env python3
"""The suite table of run_s.sh / run_b.sh: per problem, old and new flexjit rounds (old1..3, new1..3
jsonl in RESULTS_DIR), their median backward ratio and wins, and the peers beside them (peers.jsonl).
Usage: suite_table.py RESULTS_DIR"""
import json, sys, os, statistics as st
r = sys.argv[1]
def load(f):
    d = {}
    if os.path.exists(f):
        for line in open(f):
            if line.startswith("{") and '"name"' in line:
                o = json.loads(line); d.setdefault(o["name"], {})[o.get("system", "flexjit")] = o
    return d
runs = {f"{a}{n}": load(f"{r}/{a}{n}.jsonl") for a in ("old", "new") for n in (1, 2, 3)}
peers = load(f"{r}/peers.jsonl")
for n in runs["old1"]:
    g = lambda k, m: runs[k].get(n, {}).get("flexjit", {}).get(m) or 0
    ob = [g(f"old{i}", "bwd_ms") for i in (1, 2, 3) if g(f"old{i}", "bwd_ms")]
    nb = [g(f"new{i}", "bwd_ms") for i in (1, 2, 3) if g(f"new{i}", "bwd_ms")]
    ab = st.median(ob) / st.median(nb) if ob and nb else 0
    wins = sum(o > w for o, w in zip(ob, nb))
    ps = " ".join(f"{s} {v.get('fwd_tflops')}/{v.get('bwd_tflops')}" for s, v in sorted(peers.get(n, {}).items()))
    print(f"{n:28s} fwd old {g('old1','fwd_tflops'):6.1f} new {g('new1','fwd_tflops'):6.1f} | bwd old "
          + "/".join(f"{g(f'old{i}','bwd_tflops'):.1f}" for i in (1, 2, 3)) + " new "
          + "/".join(f"{g(f'new{i}','bwd_tflops'):.1f}" for i in (1, 2, 3)) + f" old/new {ab:.3f} ({wins}/{min(len(ob), len(nb))}) | {ps}")
