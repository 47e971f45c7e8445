#!/usr/bin/env bash
# The engine's two schedules, and rank-major's threads, on ResNet-50 with
# jitter stragglers (every rank, every iteration, an exponential delay of
# mean 2 ms): each pair of benchmarks run back to back, ROUNDS times, so
# the development machine's drift hits both alike; per benchmark, the
# fastest and the slowest round (ms per simulation).
#   bench/schedules.sh [ENGINE_BENCH] [ROUNDS]
set -euo pipefail
bench=${1:-build/bench/engine_bench} rounds=${2:-3}
pairs=(
  'BM_ResNet50Jitter_time_order/1024/30$|BM_ResNet50Jitter_rank_major_scaling/1024/30$'
  'BM_ResNet50Jitter_time_order/16384/30$|BM_ResNet50Jitter_rank_major_scaling/16384/30$'
  'BM_ResNet50Jitter_rank_major_scaling/16384/30$|BM_ResNet50Jitter_2threads_scaling/16384/30/'
  'BM_ResNet50Jitter_rank_major_scaling/65536/30$|BM_ResNet50Jitter_2threads_scaling/65536/30/'
)
for ((r = 0; r < rounds; r++)); do
  for p in "${pairs[@]}"; do
    "$bench" --benchmark_filter="$p" --benchmark_format=csv 2>/dev/null | grep '^"BM_' | cut -d, -f1,3
  done
done | awk -F, '{ gsub(/"/, "", $1); t = $2; n[$1]++;
                  if (!($1 in lo) || t < lo[$1]) lo[$1] = t; if (!($1 in hi) || t > hi[$1]) hi[$1] = t }
                END { for (k in lo) printf "%-56s %9.1f to %9.1f ms (%d runs)\n", k, lo[k], hi[k], n[k] }' | sort
