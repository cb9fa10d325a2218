#!/usr/bin/env bash
# Prepares FA4 and FlexAttention's FLASH backend for the GPU machine (../shared/bench/fa4/README.md)
# in two ignored folders, .fa4a and .fa4b, that each fit one device call's 64 MiB carry beside this
# repository's tracked files (which count against it too). The shared prepare.sh puts 57 MB in
# .fa4a; with this repository's tracked files (8.5 MB in session (ze), 15.7 MB in (zzs)) that was
# refused. So the CuTe IR library's archive is cut in two where needed: the head stays in .fa4a,
# the tail goes to .fa4b, and .fa4b/join_install.sh joins them on the device before the shared
# install.sh runs. What is left of the carry for a build beside .fa4b is printed at the end.
# The device counts disk usage (whole blocks), not apparent sizes: in session (zzzs) the tracked
# files were 24.2 MiB apparent but 29.9 MiB on disk, and a call carrying .fa4a was refused. So
# sizes here are du's disk usage, and a cut archive is cut so that both folders are about equally
# far under the limit.
#   scripts/fa4_prepare.sh [SHARED_BENCH_DIR]   (default: ../shared/bench)
# Then, in ONE tool batch (the machine is kept between calls only briefly): a run carrying .fa4a
# that runs `mkdir -p /tmp/fa4a && cp .fa4a/* /tmp/fa4a/`, and a run carrying .fa4b (and your
# build) that runs `bash .fa4b/join_install.sh` and then, with
# PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages, `python3 peers.py --flash ...`.
set -euo pipefail
cd "$(dirname "$0")/.."
bench=${1:-../shared/bench}
test -f "$bench/fa4/prepare.sh" || { echo "no $bench/fa4/prepare.sh: pass the shared bench folder" >&2; exit 2; }
exclude=.git/info/exclude
mkdir -p .git/info
for d in /.fa4a/ /.fa4b/; do grep -qxF "$d" "$exclude" 2>/dev/null || echo "$d" >> "$exclude"; done
rm -rf .fa4a .fa4b
bash "$bench/fa4/prepare.sh" .

limit=$(( 64 * 1048576 ))
margin=$(( 3 * 1048576 ))  # untracked files git does not ignore, and the tree's growth until the call
tracked=$(git ls-files -z | du -c -B1 --files0-from=- 2>/dev/null | tail -1 | cut -f1)
size() { du -s -B1 "$1" | cut -f1; }
ir=.fa4a/cutlass_ir.so.xz
test -f "$ir" || { echo "no $ir: the shared prepare.sh changed; read $bench/fa4/README.md" >&2; exit 2; }
over=$(( $(size .fa4a) + tracked + margin - limit ))
if [ "$over" -gt 0 ]; then
  ir_bytes=$(stat -c %s "$ir")
  # Move `over` bytes at least, or half the difference between the folders where that is more.
  even=$(( ($(size .fa4a) - $(size .fa4b)) / 2 ))
  [ "$even" -gt "$over" ] && over=$even
  head_bytes=$(( ir_bytes - over ))
  [ "$head_bytes" -gt 0 ] || { echo "the tracked files alone ($(( tracked / 1048576 )) MiB) leave no room for .fa4a" >&2; exit 2; }
  head -c "$head_bytes" "$ir" > .fa4a/cutlass_ir.so.xz.head
  tail -c +"$(( head_bytes + 1 ))" "$ir" > .fa4b/cutlass_ir.so.xz.tail
  cat .fa4a/cutlass_ir.so.xz.head .fa4b/cutlass_ir.so.xz.tail | cmp -s - "$ir" ||
    { echo "the two parts of $ir do not join back to it" >&2; exit 2; }
  rm "$ir"
  echo "split $ir: $(( head_bytes / 1048576 )) MiB stay in .fa4a, $(( (ir_bytes - head_bytes) / 1048576 )) MiB go to .fa4b"
fi
cat > .fa4b/join_install.sh <<'EOF'
#!/usr/bin/env bash
# Joins the CuTe IR archive that scripts/fa4_prepare.sh cut in two (if it did), then installs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
test -d /tmp/fa4a || { echo "no /tmp/fa4a: the machine was not kept between the two calls; run both again" >&2; exit 3; }
if [ -f /tmp/fa4a/cutlass_ir.so.xz.head ]; then
  cat /tmp/fa4a/cutlass_ir.so.xz.head "$here/cutlass_ir.so.xz.tail" > /tmp/fa4a/cutlass_ir.so.xz
  rm /tmp/fa4a/cutlass_ir.so.xz.head
fi
exec bash "$here/install.sh"
EOF
for d in .fa4a .fa4b; do
  s=$(size "$d")
  echo "$d: $(( s / 1048576 )) MiB; with the tracked files $(( (s + tracked) / 1048576 )) MiB of the 64 MiB carry," \
       "$(( (limit - s - tracked) / 1048576 )) MiB left for what travels beside it"
  [ $(( s + tracked + 1048576 )) -le "$limit" ] ||
    echo "warning: $d and the tracked files leave less than 1 MiB of the carry; compress or drop large tracked records" >&2
done
