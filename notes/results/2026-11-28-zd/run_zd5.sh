#!/usr/bin/env bash
# Session (zd), call zd5 (as run, one line, from the repository root; the warm machine of zd4):
# the three deterministic-way tests zd4's test run did not reach before its timeout.
cd .gpu/zd && LD_LIBRARY_PATH=/usr/local/cuda/lib64 FLEXJIT_CACHE_DIR=/tmp/fc_t5 timeout 200 ./gpu_test_attention --gtest_filter='BwdGpu.DeterministicModeMeasuresTheWayWhenTuning:BwdGpu.DeterministicModeTakesTheFasterWayPerCall:BwdGpu.DeterministicModeSumsDqInOrder' 2>&1 | grep -E "^\[|Failure|Expected|Which is|actual|seed" | tail -30
