#!/usr/bin/env bash
# (zzzw) call B, after call A copied .fa4a to /tmp/fa4a on this warm machine: carry .fa4b and
# .gpu/zzzwb. Installs FA4, then on a quiet GPU: the landing binary with main's templates (old,
# through FLEXJIT_TEMPLATE_DIR=tmain) and with its own (new, embedded), peers.py --flash between
# their first rounds, then more alternating rounds (forward + fast backward of the suite).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzw}; r=/tmp/zzzwbr/r; mkdir -p $r $out
save() { (cd /tmp/zzzwbr && tar czf $out/zzzw_suite.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
for f in *.xz; do [ -f "${f%.xz}" ] || python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" "$f"; chmod +x "${f%.xz}"; done
tar xf tmain.tar -C /tmp  # the path call C warmed the kernel cache with
bash ../../.fa4b/join_install.sh > $r/install.txt 2>&1; echo "install rc=$? $(( $(date +%s) - t0 )) s"; tail -2 $r/install.txt
export FLEXJIT_AUTOTUNE=off
# bench ARM RUN LIMIT_S: ARM old (main's templates) or new (the binary's own).
bench() {
  local tv=""; [ $1 = old ] && tv=/tmp/tmain/templates
  FLEXJIT_TEMPLATE_DIR=$tv FLEXJIT_CACHE_DIR=/tmp/fc_$1 timeout $3 ./flexjit bench --suite suite_official.json --json $r/$2.jsonl > $r/$2.log 2>&1 || tail -3 $r/$2.log
  echo "$2 $(( $(date +%s) - t0 )) s"; save
}
bench old old1 150
export PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages PYTHONUNBUFFERED=1
left=$(( 420 - ($(date +%s) - t0) ))
timeout $left python3 peers.py --flash --suite suite_official.json > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
echo "peers $(( $(date +%s) - t0 )) s $(grep -c '"name"' $r/peers.jsonl) rows"
save
unset PYTHONPATH
bench new new1 120
for n in 2 3; do
  for a in old new; do
    left=$(( 540 - ($(date +%s) - t0) )); [ $left -gt 45 ] && bench $a $a$n $left
  done
done
python3 suite_table.py $r | tee $r/table.txt
echo "all $(( $(date +%s) - t0 )) s"
save
