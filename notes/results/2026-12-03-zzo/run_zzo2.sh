#!/bin/bash
# zzo2: (1) documents + causal at d80 (turns since 0fda193) and d88 (split columns, control)
# against main before the change (flexjitA), rounds alternating; (2) per-sequence lengths at
# d80/d96 (two stages by default) against `--dkdv-config m64n128w8s3ws`; (3) ncu of main's fast
# dK/dV kernel on the suite's noop d64 and noop d128 (where the d64 backward's time goes).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzo2}; r=/tmp/zzo2r/r; mkdir -p $r $out
save() { (cd /tmp/zzo2r && tar czf $out/zzo2.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONUNBUFFERED=1 FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
python3 - <<'PY'
import json
docs = "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx"
probs = [{"name": f"documents_causal_d{d}", "B": 4, "Hq": 16, "Hkv": 16, "Sq": 4096, "Skv": 4096, "D": d,
          "dtype": "bf16", "mask_mod": docs, "buffers": {"doc": {"dtype": "i32", "segments": [261, 99, 89, 232, 709, 171, 120, 577, 472, 697, 519, 150]}}}
         for d in (80, 88)]
json.dump({"about": "zzo2: documents at d80 (turns) and d88 (split columns)", "problems": probs}, open("docs_hd.json", "w"), indent=1)
rag = [{"name": f"ragged_{m}_d{d}", "B": 16, "Hq": 16, "Hkv": 16, "Sq": 4096, "Skv": 4096, "D": d, "dtype": "bf16",
        "seq_lens": {"uniform": [256, 4096]}, **({"mask_mod": "q_idx >= kv_idx"} if m == "causal" else {})}
       for d in (80, 96) for m in ("noop", "causal")]
json.dump({"about": "zzo2: ragged batches at d80/d96", "problems": rag}, open("ragged_hd.json", "w"), indent=1)
PY
arm() { a=$1; n=$2; shift 2; FLEXJIT_CACHE_DIR=/tmp/fc_$a timeout 60 ./$a bench --json $r/${a}_$n.jsonl "$@" > $r/${a}_$n.log 2>&1; echo "$a $n rc=$? $(( $(date +%s) - t0 )) s"; save; }
arm flexjitA d1 --suite docs_hd.json; arm flexjit d1 --suite docs_hd.json
arm flexjit d2 --suite docs_hd.json; arm flexjitA d2 --suite docs_hd.json
arm flexjitA d3 --suite docs_hd.json; arm flexjit d3 --suite docs_hd.json
arm flexjit l2_1 --suite ragged_hd.json; arm flexjit l3_1 --suite ragged_hd.json --dkdv-config m64n128w8s3ws
arm flexjit l3_2 --suite ragged_hd.json --dkdv-config m64n128w8s3ws; arm flexjit l2_2 --suite ragged_hd.json
arm flexjit l2_3 --suite ragged_hd.json; arm flexjit l3_3 --suite ragged_hd.json --dkdv-config m64n128w8s3ws
for f in $r/*.jsonl; do echo "== $f"; grep bwd_ms $f | python3 -c "import sys, json; [print(json.loads(l)['name'], json.loads(l)['bwd_ms']) for l in sys.stdin]"; done > $r/summary.txt; save
for p in noop_d64 noop_d128; do
  FLEXJIT_CACHE_DIR=/tmp/fcn timeout 150 ncu --kernel-name flexjit_attention_bwd_dkdv --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section SourceCounters --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis \
    --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__cycles_active.avg,gpc__cycles_elapsed.max,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__inst_executed_pipe_xu.sum,sm__inst_executed_pipe_uniform.sum \
    --import-source no -o $r/rep_$p ./flexjit bench --suite suite.json --only $p > $r/ncu_$p.log 2>&1
  echo "ncu $p rc=$? $(( $(date +%s) - t0 )) s"
  ncu -i $r/rep_$p.ncu-rep --print-details all > $r/details_$p.txt 2>&1
  ncu -i $r/rep_$p.ncu-rep --page source --csv --print-source sass > $r/src_$p.csv 2>&1
  grep -E 'Duration|gmma|Issue Slots Busy|SM Frequency|cycles_active|wavefronts|Mem Busy|Max Bandwidth' $r/details_$p.txt | head -14
  rm -f $r/rep_$p.ncu-rep; save
done
echo "done $(( $(date +%s) - t0 )) s"; save
