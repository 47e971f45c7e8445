# Sourced by cpu_loop_test.sh and cpu_fsdp_test.sh: `ranks W ARGS...` runs ddpsim-real ARGS on W ranks
# under mpirun; with NETWORK set (a rate, `1gbit`), the W > 1 jobs run on the emulated network
# (docs/emulated-network.md): inside `ddpsim_torch network NETWORK --ranks W`, each rank with --network.
# Before it: `network_or_skip` exits 77 (ctest: skipped) where no network namespace can be made.
# The sweeps' sizes: 8 B to 16 MiB; on the network 64 KiB to 4 MiB, around the model's buckets (0.13 and
# 1.05 MB): below 64 KiB a message rides the shaper's 256 KB bucket at memory speed, and a line fitted
# through those sizes prices the link at 3.4 Gbit/s (docs/validation.md, "ddpsim-real on the network").
sweep_sizes=(--max-bytes 16777216)
[ -n "${NETWORK:-}" ] && sweep_sizes=(--min-bytes 65536 --max-bytes 4194304)
ddpsim_torch() { PYTHONPATH="$root/python" "$("$root/scripts/python.sh")" -m ddpsim_torch "$@"; }
network_or_skip() {
  [ -z "${NETWORK:-}" ] && return 0
  if ! why=$(ddpsim_torch network 100mbit --ranks 1 -- true 2>&1); then
    echo "SKIPPED: no emulated network here ($why)"
    exit 77
  fi
}
ranks() {
  local w=$1
  shift
  local cmd=$1
  shift
  if [ -z "${NETWORK:-}" ] || [ "$w" -eq 1 ]; then
    mpirun --oversubscribe -np "$w" "$real" "$cmd" "$@"
  else
    ddpsim_torch network "$NETWORK" --ranks "$w" -- mpirun --oversubscribe -np "$w" "$real" "$cmd" "$@" --network "$NETWORK"
  fi
}
# The W = 2 row again, calibrated without the overlap micro-benchmark (the
# contention terms off), on the same logs: what the measured overlap changes.
# Usage: without_overlap SCENARIO MEASURED_PREFIX...
without_overlap() {
  local scenario=$1
  shift
  "$ddpsim" calibrate --measured "$out/w1.rank0.json" "$out/sweep_w1.json" "$out/sweep_w2.json" \
    --out "$out/no_overlap.yaml" > /dev/null
  "$ddpsim" validate --scenario "$scenario" --calibration "$out/no_overlap.yaml" --measured "$@" \
    | awk '$1 == 2 && NF > 6 { print "without the measured overlap: W = 2 predicted " $3 " ms, error " $4 \
                                " (closed form " $6 ")" }'
}
