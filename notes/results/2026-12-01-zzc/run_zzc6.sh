#!/bin/bash
cd "$(dirname "$0")"; g=$PWD
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fjcache PYTHONPATH=$g/../../python FLEXJIT_LIBRARY=$g/libflexjit.so
O=${OUT:-/tmp/out}; mkdir -p $O
timeout 200 python3 contig.py 2>&1 | tee $O/contig.jsonl
