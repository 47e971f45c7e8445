#!/usr/bin/env bash
# Engine speed: bench/resnet50_64.yaml on the analytic and the SimGrid
# engine (median of REPEAT runs of the whole `ddpsim run`, wall clock), the
# ratio, then the same job at 128, 256, ... ranks (nodes doubled) on the
# SimGrid engine until one run takes over LIMIT_S seconds or the engine's
# limit (16,384 ranks) is reached; wall time and peak memory of each.
#   bench/engines.sh [DDPSIM] [REPEAT] [LIMIT_S]
set -euo pipefail
ddpsim=${1:-build/cli/ddpsim} repeat=${2:-5} limit=${3:-60}
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
seconds() {  # wall seconds of one run, to the millisecond
  local t0 t1
  t0=$(date +%s%N)
  "$ddpsim" run "$@" > /dev/null
  t1=$(date +%s%N)
  echo "$(( (t1 - t0) / 1000000 ))"
}
median_ms() {
  local runs=()
  for ((i = 0; i < repeat; i++)); do runs+=("$(seconds "$@")"); done
  printf '%s\n' "${runs[@]}" | sort -n | sed -n "$(( (repeat + 1) / 2 ))p"
}
a=$(median_ms bench/resnet50_64.yaml --engine analytic)
p=$(median_ms bench/resnet50_64.yaml --engine analytic --per-rank)
s=$(median_ms bench/resnet50_64.yaml --engine simgrid)
echo "resnet50_64 (64 ranks, 100 iterations), median of $repeat runs:"
echo "  analytic engine (symmetric fast path)  ${a} ms"
echo "  analytic engine, --per-rank            ${p} ms"
echo "  simgrid engine                         ${s} ms"
echo "  ratio simgrid / analytic               $(awk -v a="$a" -v s="$s" 'BEGIN { printf "%.1f", s / (a > 0 ? a : 1) }')x"
# Without memoisation SimGrid simulates every collective of every iteration (one run).
{ cat bench/resnet50_64.yaml; printf 'simgrid:\n  memoize: false\n'; } > "$work/nomemo.yaml"
n=$(seconds "$work/nomemo.yaml" --engine simgrid)
echo "  simgrid engine, simgrid.memoize: false (every collective simulated, one run)  ${n} ms" \
  "($(awk -v a="$a" -v n="$n" 'BEGIN { printf "%.0f", n / (a > 0 ? a : 1) }')x the analytic engine)"
echo "SimGrid engine, same job on more nodes (one run each, limit ${limit} s):"
printf '  %8s %10s  %s\n' ranks seconds "SimGrid: ..."
for ((nodes = 16; nodes * 8 <= 16384; nodes *= 2)); do
  w=$((nodes * 8))
  sed -e "s/^world_size: 64$/world_size: $w/" -e "s/^  nodes: 8$/  nodes: $nodes/" bench/resnet50_64.yaml > "$work/r$w.yaml"
  t0=$(date +%s%N)
  line=$(timeout $((limit * 3)) /usr/bin/time -f "peak %M KB" -o "$work/mem" "$ddpsim" run "$work/r$w.yaml" --engine simgrid |
         grep '^SimGrid:' || true)
  t1=$(date +%s%N)
  ms=$(( (t1 - t0) / 1000000 ))
  printf '  %8d %10.1f  %s, %s\n' "$w" "$(awk -v m="$ms" 'BEGIN { print m / 1000 }')" "${line:-timed out}" "$(cat "$work/mem")"
  if ((ms > limit * 1000)); then break; fi
done
