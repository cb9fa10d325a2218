#!/usr/bin/env bash
# For the next session, prepared in (zo), not run. One call, about 380 s. The writers' wait for
# the staged dQ three ways, on main and on the ranker, deterministic backward, tuning off:
#   old       main's binary, templates of 79d2628 (whole warp polls dq_full; the lost-phase hazard)
#   lane0     main's binary as built (29f9bf8: lane 0 alone waits; on main)
#   sync      main's binary, templates of branch zo-syncwait (whole warp waits, then __syncwarp)
#   rk_old    ranker binary, templates of f7e9557 (the ranker as measured at 375 TF/s causal d256;
#             hangs at d128 and d64, so d256 rows only)
#   rk_lane0  ranker binary, templates of zn-ranker 209eb7c (measured 315 in (zo))
#   rk_sync   ranker binary, templates of zo-ranker-syncwait
# Round 1: every variant on d256 (5 rows), d128 (causal, noop, GQA) and d64 (causal, noop);
# round 2 (reversed order): d256 only; then the fast mode once (main's binary). ptxas gave
# rk_sync and sync consumer code identical to rk_old's and old's (notes/perf.md, "(zo)"), so
# rk_sync against rk_old says whether the wait itself or the codegen made the 375.
# Stage in .gpu/<s>/: flexjit_main, flexjit_ranker, suite*.json, tpl_* (see stage_zp.sh), this.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zp1}; r=/tmp/zp1r/r; mkdir -p $r $out
save() { (cd /tmp/zp1r && tar czf $out/zp1.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
D256="suite256.json noop_d256,causal_d256,softcap_causal_d256,document_causal_d256,gqa_causal_d256"
D128="suite.json causal_d128,noop_d128,gqa_causal_d128"
D64="suite64x.json causal_d64,noop_d64"
bench() {  # tag round mode suite only
  local tag=$1 round=$2 mode=$3 suite=$4 only=$5 bin tpl=""
  case $tag in
    old) bin=flexjit_main tpl=tpl_79d2628 ;; lane0|fast) bin=flexjit_main ;; sync) bin=flexjit_main tpl=tpl_zosyncwait ;;
    rk_old) bin=flexjit_ranker tpl=tpl_f7e9557 ;; rk_lane0) bin=flexjit_ranker tpl=tpl_znranker ;;
    rk_sync) bin=flexjit_ranker tpl=tpl_zorankersyncwait ;;
  esac
  [ $(( $(date +%s) - t0 )) -gt 420 ] && { echo "skip $tag $suite r$round"; return; }
  FLEXJIT_TEMPLATE_DIR=${tpl:+$PWD/$tpl} FLEXJIT_CACHE_DIR=/tmp/fcp_$tag timeout 60 ./$bin bench --suite $suite --only $only \
    --bwd-mode $mode --json $r/b_${tag}_${suite%.json}_r$round.jsonl >> $r/b_$tag.log 2>&1
  echo "$tag $suite r$round rc=$? $(( $(date +%s) - t0 )) s"
}
for v in old lane0 sync rk_old rk_sync; do
  bench $v 1 deterministic $D256
  [ $v = rk_old ] && continue
  bench $v 1 deterministic $D128; bench $v 1 deterministic $D64
done
save
for v in rk_sync rk_old sync lane0 old; do bench $v 2 deterministic $D256; done
bench fast 1 fast $D256; bench fast 1 fast $D128; bench fast 1 fast $D64
save
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections, statistics
r = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
tags = ["old", "lane0", "sync", "rk_old", "rk_sync", "fast"]
for f in sorted(glob.glob(f"{r}/b_*.jsonl")):
    v = re.search(r"b_(rk_old|rk_lane0|rk_sync|old|lane0|sync|fast)_", f).group(1)
    for line in open(f):
        if line.startswith("{"):
            o = json.loads(line)
            if o.get("bwd_tflops"): rows[o["name"]][v].append(round(o["bwd_tflops"], 1))
print("backward TF/s (deterministic; fast last); mean per variant, ratio to old")
print(f"{'problem':28s} " + " ".join(f"{t:>14s}" for t in tags))
for n, d in sorted(rows.items()):
    old = statistics.mean(d["old"]) if d["old"] else float("nan")
    cells = []
    for t in tags:
        if d[t]:
            m = statistics.mean(d[t]); cells.append(f"{m:7.1f} x{m / old:.3f}")
        else:
            cells.append(f"{'-':>14s}")
    print(f"{n:28s} " + " ".join(cells))
PY
echo "$(( $(date +%s) - t0 )) s"
save

# The peers on the same rows, same call (nothing of flexjit runs beside them).
for s in "suite256.json noop_d256,causal_d256,gqa_causal_d256" "suite.json causal_d128,noop_d128,gqa_causal_d128" "suite64x.json causal_d64,noop_d64"; do
  set -- $s
  left=$(( 585 - ($(date +%s) - t0) )); [ $left -lt 30 ] && break
  timeout $left python3 peers.py --suite $1 --only $2 > $r/peers_${1%.json}.jsonl 2> $r/peers_${1%.json}.err || tail -3 $r/peers_${1%.json}.err
  echo "peers $1 $(( $(date +%s) - t0 )) s"
done
python3 - $r <<'PY' | tee $r/peers_summary.txt
import json, sys, glob
for f in sorted(glob.glob(f"{sys.argv[1]}/peers_*.jsonl")):
    for line in open(f):
        if line.startswith("{") and '"name"' in line:
            o = json.loads(line)
            print(f"{o['name']:28s} {o.get('system', '?'):24s} fwd {o.get('fwd_tflops')} bwd {o.get('bwd_tflops')}")
PY
save
