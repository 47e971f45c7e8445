# Sourced by cpu_loop_test.sh and cpu_fsdp_test.sh: `ranks W ARGS...` runs ddpsim-real ARGS on W ranks
# under mpirun; with NETWORK set (a rate, `1gbit`), the W > 1 jobs run on an emulated switch of W hosts
# (docs/emulated-network.md, "MPI on the cluster"): `ddpsim_torch network NETWORK --ranks W --mpirun`, each
# rank in a network namespace of its own behind a NETWORK link, Open MPI's TCP between them.
# Before it: `network_or_skip` exits 77 (ctest: skipped) where no network namespace can be made.
# The sweeps' sizes: 8 B to 16 MiB; on the network 512 KiB to 4 MiB: each link's token bucket holds 1 ms
# at its rate (125 KB at 1 Gbit/s), refilled while MPI's reduce-then-broadcast (libnbc's at W < 4) uses the
# other direction, so smaller messages go out at memory speed and a line fitted through them prices the
# link at twice its rate or more (docs/validation.md, "ddpsim-real on the cluster of hosts").
sweep_sizes=(--max-bytes 16777216)
[ -n "${NETWORK:-}" ] && sweep_sizes=(--min-bytes 524288 --max-bytes 4194304)
ddpsim_torch() { PYTHONPATH="$root/python" "$("$root/scripts/python.sh")" -m ddpsim_torch "$@"; }
network_or_skip() {
  [ -z "${NETWORK:-}" ] && return 0
  if ! why=$(ddpsim_torch network 100mbit --ranks 1 --mpirun -- true 2>&1); then
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
    ddpsim_torch network "$NETWORK" --ranks "$w" --mpirun -- "$real" "$cmd" "$@"
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
  # The row: W, measured, +-spread, predicted, error, closed form, its error, ... (--target-pct: the
  # errors reported, not an exit code).
  "$ddpsim" validate --scenario "$scenario" --calibration "$out/no_overlap.yaml" --measured "$@" \
    --target-pct "$target" \
    | awk '$1 == 2 && NF > 6 { print "without the measured overlap: W = 2 predicted " $4 " ms, error " $5 \
                                " (closed form " $7 ")" }'
}
