#!/usr/bin/env bash
# (zzzp) call 2 of one warm machine (call 1 copied .fa4a to /tmp/fa4a). Carry .fa4b and .gpu/zzzp:
# main's gta / flexjit and bounds-walk-unstaged's gta_bw / flexjit_bw (stripped, xz), ab2.sh
# (../2026-12-04-zzv/), keys_up_to_len.json (../2026-12-06-zzzo/), suite.json, peers.py.
# While FA4 installs (CPU), (zzzo)'s owed GPU tests:
#  main: FwdGpu.MasksWithBoundsAndColumnValuesWithoutBlockMask (written in (zzzo), never run),
#        BwdGpu.CapturedInAGraphAndReplayedGivesTheSameGradients (bwd-pdl's launches in a graph),
#        RandomProblemsGpu.* three times (fresh seeds);
#  branch: the same forward test (on the tile-bounds walk) and FwdGpu.WarpSpecializedTileBoundsWalk.
# Then the A/B main / branch, forward only, without block masks (the branch skips tiles past len[b]).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zp1}; r=/tmp/zp1r/r; mkdir -p $r $out
save() { (cd /tmp/zp1r && tar czf $out/zzzp1.tar.gz r); }
for f in *.xz; do [ -f "${f%.xz}" ] || python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" "$f"; chmod +x "${f%.xz}"; done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
if [ -d /tmp/site/flash_attn ]; then echo "FA4 already installed" > $r/install.txt; else
  ( cd ../.. && timeout 230 bash .fa4b/join_install.sh ) > $r/install.txt 2>&1; fi &
run() { local tag=$1 bin=$2 filter=$3; (FLEXJIT_CACHE_DIR=/tmp/fj_$tag timeout 300 ./$bin --gtest_filter="$filter" > $r/tests_$tag.txt 2>&1; echo "$tag rc=$? $(( $(date +%s) - t0 )) s $(grep -c '^\[       OK' $r/tests_$tag.txt) ok") & }
run main1 gta 'FwdGpu.MasksWithBoundsAndColumnValuesWithoutBlockMask:BwdGpu.CapturedInAGraphAndReplayedGivesTheSameGradients'
run main2 gta 'RandomProblemsGpu.*'
run main3 gta 'RandomProblemsGpu.*'
run main4 gta 'RandomProblemsGpu.*'
run bw1 gta_bw 'FwdGpu.MasksWithBoundsAndColumnValuesWithoutBlockMask:FwdGpu.WarpSpecializedTileBoundsWalk'
wait
echo "install: $(tail -1 $r/install.txt) $(( $(date +%s) - t0 )) s"
grep -hE "^\[ +(OK|FAILED) |Failure|FAILED TEST|seed" $r/tests_*.txt | grep -v "^\[       OK" | head -40
save
OUT=$r bash ab2.sh bwab keys_up_to_len.json fwd_ms 100 3 "--no-bwd --no-block-mask" main:./flexjit:: walk:./flexjit_bw:: 2>&1 | grep -v "^bwab "
echo "all $(( $(date +%s) - t0 )) s"
save
