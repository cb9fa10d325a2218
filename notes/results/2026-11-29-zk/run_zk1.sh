#!/usr/bin/env bash
# For the next session's first call, prepared in (zj): run_zk1_next.sh (the ascending turns,
# deterministic backward) and run_zk3_next.sh (the forward's exponentials on the FMA pipe at d64)
# in one call, one after the other (neither beside the other), about 400-450 s.
# Build here: main (flexjit); main + zk_ascending_turns.patch (flexjit_asc); main +
# zk_exp2_fma.patch (flexjit_fma). Stage all three with suite.json, suite64x.json and
# suite256.json and the two scripts in .gpu/<s>/. Apply zk_exp2_fma.patch to the working tree
# before the call (run_zk3_next.sh copies the tree's templates/ for its every-second-tile
# variant), and carry .gpu/<s>.
set -u
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/zk} bash "$here/run_zk1_next.sh"
OUT=${OUT:-/tmp/zk} bash "$here/run_zk3_next.sh"
