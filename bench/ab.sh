#!/usr/bin/env bash
# Two builds of engine_bench, A and B, on the same benchmarks: run one after
# the other, ROUNDS times, so the development machine's drift hits both
# alike, and both on the same core (CPU, default 0: this machine's two
# cores differ by up to 30 %, which unpinned runs mistake for the change);
# per build and benchmark, the fastest and the slowest round (ms per
# simulation). Build B from a checkout of the commit to compare with, e.g.
#   git worktree add /tmp/before HEAD~1 && cmake -S /tmp/before -B /tmp/before/build \
#     -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDDPSIM_BENCH=ON && cmake --build /tmp/before/build --target engine_bench
#   [CPU=0] bench/ab.sh build/bench/engine_bench /tmp/before/build/bench/engine_bench 'BM_ResNet50_scaling/(1024|16384)/' [ROUNDS]
set -euo pipefail
a=$1 b=$2 filter=$3 rounds=${4:-3}
for ((r = 0; r < rounds; r++)); do
  for side in A B; do
    bin=$a
    [[ $side == B ]] && bin=$b
    taskset -c "${CPU:-0}" "$bin" --benchmark_filter="$filter" --benchmark_format=csv 2>/dev/null | grep '^"BM_' | grep -v '_BigO\|_RMS' |
      cut -d, -f1,3 | sed "s/^/$side,/"
  done
done | awk -F, '{ gsub(/"/, "", $2); k = $2 " " $1; t = $3; n[k]++;
                  if (!(k in lo) || t < lo[k]) lo[k] = t; if (!(k in hi) || t > hi[k]) hi[k] = t }
                END { for (k in lo) printf "%-50s %9.1f to %9.1f ms (%d runs)\n", k, lo[k], hi[k], n[k] }' | sort
