#!/usr/bin/env bash
# ddpsim advise's speed: bench/advise_gpt2_512.yaml searched over 64 world
# sizes (every whole node, 8 to 512) and the accumulations that keep the global batch in
# 64:8192, on one core (taskset -c 0, --threads 1): the configurations
# tried, the median wall time of REPEAT runs, and the time per configuration.
#   bench/advise.sh [DDPSIM] [REPEAT]
set -euo pipefail
ddpsim=${1:-build/cli/ddpsim} repeat=${2:-3}
cd "$(dirname "$0")/.."
args=(advise bench/advise_gpt2_512.yaml --world-size "$(seq -s, 8 8 512)" --global-batch 64:8192 --threads 1)
configs=$("$ddpsim" "${args[@]}" | sed -n 's/^\([0-9]*\) configurations:.*/\1/p')
runs=()
for ((i = 0; i < repeat; i++)); do
  t0=$(date +%s%N)
  taskset -c 0 "$ddpsim" "${args[@]}" > /dev/null
  t1=$(date +%s%N)
  runs+=("$(( (t1 - t0) / 1000000 ))")
done
ms=$(printf '%s\n' "${runs[@]}" | sort -n | sed -n "$(( (repeat + 1) / 2 ))p")
echo "advise_gpt2_512: ${configs} configurations in ${ms} ms on one core (median of ${repeat}),"\
     "$(( ms * 1000 / configs )) us a configuration"
