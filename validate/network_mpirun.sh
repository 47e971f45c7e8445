# Sourced by cpu_loop_test.sh and cpu_fsdp_test.sh: `ranks W ARGS...` runs ddpsim-real ARGS on W ranks
# under mpirun; with NETWORK set (a rate, `1gbit`), the W > 1 jobs run on the emulated network
# (docs/emulated-network.md): inside `ddpsim_torch network NETWORK --ranks W`, each rank with --network.
# Before it: `network_or_skip` exits 77 (ctest: skipped) where no network namespace can be made.
ddpsim_torch() { PYTHONPATH="$root/python" /usr/bin/python3 -m ddpsim_torch "$@"; }
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
