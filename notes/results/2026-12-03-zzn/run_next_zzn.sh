#!/bin/bash
# For the next session with a GPU: what (zzn) left owed. Setup: .gpu/<name>/ with flexjitA (a
# build of main before 0fda193, e.g. b4ab94a), flexjit and gpu_test_attention (main's build),
# bwd_hd.json, offsuite_peers.py, ratios_by_time.py, ../shared/bench/peers.py and this script (it
# writes docs_hd.json and ragged_hd.json); carry [".gpu/<name>"].
#   0. the landed default (three stages, turns) against main before it and beside cuDNN / FA2 in
#      ONE call: (zzn) timed main and the peers in zzn2 and the final default in zzn5;
#   1. BwdGpu/DqByTurnsOverTheTensorsColumns.* (cases 8 and 9 never ran on a GPU), with memcheck
#      and synccheck on those two;
#   2. documents + causal at d80 (turns since 0fda193, unmeasured) and d88 (split columns, control)
#      against main before the change, rounds alternating;
#   3. per-sequence lengths at d80/d96 (two stages by default): `--dkdv-config m64n128w8s3ws`
#      against the default, after SeqLensGpu.HeadDimsThatAreNoMultipleOf64 passes.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/nextzzn}; r=/tmp/nextzzn_r/r; mkdir -p $r $out
save() { (cd /tmp/nextzzn_r && tar czf $out/next_zzn.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONUNBUFFERED=1
t0=$(date +%s)
python3 - <<'PY'
import json
docs = "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx"
probs = [{"name": f"documents_causal_d{d}", "B": 4, "Hq": 16, "Hkv": 16, "Sq": 4096, "Skv": 4096, "D": d,
          "dtype": "bf16", "mask_mod": docs, "buffers": {"doc": {"dtype": "i32", "segments": [261, 99, 89, 232, 709, 171, 120, 577, 472, 697, 519, 150]}}}
         for d in (80, 88)]
json.dump({"about": "next (zzn): documents at d80 (turns) and d88 (split columns)", "problems": probs}, open("docs_hd.json", "w"), indent=1)
rag = [{"name": f"ragged_{m}_d{d}", "B": 16, "Hq": 16, "Hkv": 16, "Sq": 4096, "Skv": 4096, "D": d, "dtype": "bf16",
        "seq_lens": {"uniform": [256, 4096]}, **({"mask_mod": "q_idx >= kv_idx"} if m == "causal" else {})}
       for d in (80, 96) for m in ("noop", "causal")]
json.dump({"about": "next (zzn): ragged batches at d80/d96 (seq_lens as (zs)'s ragged.json)", "problems": rag}, open("ragged_hd.json", "w"), indent=1)
PY
FLEXJIT_CACHE_DIR=/tmp/fct timeout 250 ./gpu_test_attention --gtest_filter='BwdGpu/DqByTurnsOverTheTensorsColumns.*:SeqLensGpu.HeadDimsThatAreNoMultipleOf64' > $r/tests.txt 2>&1 &
for i in 8 9; do for tool in memcheck synccheck; do
  FLEXJIT_CACHE_DIR=/tmp/fc_${tool}_$i timeout 250 compute-sanitizer --tool $tool --kernel-name kns=attention_bwd_dkdv ./gpu_test_attention --gtest_filter="BwdGpu/DqByTurnsOverTheTensorsColumns.Case/$i" > $r/${tool}_$i.txt 2>&1 &
done; done
wait; grep -E "OK \]|FAILED \]" $r/tests.txt; grep -h "ERROR SUMMARY" $r/memcheck_*.txt $r/synccheck_*.txt; save
export FLEXJIT_AUTOTUNE=off
arm() { a=$1; n=$2; shift 2; FLEXJIT_CACHE_DIR=/tmp/fc_$a timeout 60 ./$a bench --json $r/${a}_$n.jsonl "$@" > $r/${a}_$n.log 2>&1; echo "$a $n rc=$? $(( $(date +%s) - t0 )) s"; save; }
for n in 1 2 3; do arm flexjitA h$n --suite bwd_hd.json; arm flexjit h$n --suite bwd_hd.json; done
timeout 150 python3 offsuite_peers.py --suite bwd_hd.json --no-flex > $r/peers.jsonl 2> $r/peers.err; echo "peers rc=$?"; save
for a in flexjitA flexjit; do echo "== $a"; python3 ratios_by_time.py $r/${a}_h[123].jsonl --peers $r/peers.jsonl; done | tee $r/ratios.txt; save
for n in 1 2 3; do arm flexjitA d$n --suite docs_hd.json; arm flexjit d$n --suite docs_hd.json; done
for n in 1 2 3; do arm flexjit l2_$n --suite ragged_hd.json; arm flexjit l3_$n --suite ragged_hd.json --dkdv-config m64n128w8s3ws; done
for f in $r/*.jsonl; do echo "== $f"; grep bwd_ms $f | python3 -c "import sys, json; [print(json.loads(l)['name'], json.loads(l)['bwd_ms']) for l in sys.stdin]"; done | tee $r/summary.txt; save
