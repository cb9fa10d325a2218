#!/bin/bash
# zzc3: the split rule counted after rounding (new) against zzc2's library, graph-captured; decode
# tile configs on the small rows through flexjit bench; ncu of B=64 1k paged16 against contiguous.
cd "$(dirname "$0")"; g=$PWD
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fjcache PYTHONPATH=$g/../../python
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
O=${OUT:-/tmp/out}; W=/tmp/w3; mkdir -p $O $W
t0=$(date +%s)
for r in 1 2; do
  FLEXJIT_LIBRARY=$g/libflexjit_zzc2.so timeout 60 python3 sweep3.py > $W/zzc2_r$r.jsonl 2> $W/zzc2_r$r.err
  FLEXJIT_LIBRARY=$g/libflexjit.so timeout 60 python3 sweep3.py > $W/new_r$r.jsonl 2> $W/new_r$r.err
done
echo "latency $(( $(date +%s) - t0 )) s"
./flexjit bench --suite small.json --no-bwd --json $W/b_default.jsonl > $W/b_default.txt 2>&1
for c in m16n64w4s3t m16n64w4s4t m16n128w4s2t m16n64w4s3 m16n128w8s3 m16n64w8s4t; do
  timeout 60 ./flexjit bench --suite small.json --no-bwd --decode-config $c --json $W/b_$c.jsonl > $W/b_$c.txt 2>&1
done
echo "bench $(( $(date +%s) - t0 )) s"
cat > $W/ncu.py <<'PY'
import sys, os, torch
sys.path.insert(0, os.path.join("$g", "../../scripts"))
PY
timeout 150 ncu --section SpeedOfLight --section Occupancy --section LaunchStats --kernel-name regex:flexjit_attention_decode$ --launch-skip 2 --launch-count 1 ./flexjit bench --suite small.json --no-bwd --only decode_b64_kv1k_paged16 > $W/ncu_paged.txt 2>&1
timeout 150 ncu --section SpeedOfLight --section Occupancy --section LaunchStats --kernel-name regex:flexjit_attention_decode$ --launch-skip 2 --launch-count 1 ./flexjit bench --suite small.json --no-bwd --only decode_b64_kv1k > $W/ncu_contig.txt 2>&1
echo "ncu $(( $(date +%s) - t0 )) s"
python3 - $W <<'PY'
import json,sys,collections,glob,os
W=sys.argv[1]; rows=collections.defaultdict(lambda: collections.defaultdict(list))
for tag in ('zzc2','new'):
    for r in (1,2):
        for l in open(f'{W}/{tag}_r{r}.jsonl'):
            o=json.loads(l)
            if 'system' in o: rows[(o['name'],o['system'])][tag].append(o.get('graph_us'))
for k,v in rows.items(): print(f"{k[0]:28s} {k[1]:30s} zzc2 {v['zzc2']} new {v['new']}")
for f in sorted(glob.glob(f'{W}/b_*.jsonl')):
    for l in open(f):
        try: r=json.loads(l)
        except: continue
        if 'name' in r: print(os.path.basename(f)[2:-6], r['name'], r.get('fwd_gbps'), r.get('fwd_config'), r.get('fwd_ms'))
PY
grep -E 'Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Theoretical Occupancy|Grid Size|Registers|Waves Per SM|Block Limit' $W/ncu_paged.txt $W/ncu_contig.txt
tar czf $O/zzc3.tar.gz -C $W .
