#!/usr/bin/env bash
# The seed's hang on real processes: 4 ranks, rank 1 skips backward in
# iteration 3. The watchdog (2 s) must report who is missing from which
# collective and abort every rank: mpirun fails and no process is left.
# Every rank leaves its flight recorder (--flight-recorder), and `ddpsim
# explain` on those dumps names rank 1 and the collective, as it does for
# the simulated hang. With --symmetric-skip the same run completes.
# Usage: hang_test.sh DDPSIM_REAL OUT_DIR DDPSIM
set -euo pipefail
bin=$1 out=$2 ddpsim=$3
rm -rf "$out" && mkdir -p "$out"
common=(train --dataset-size 256 --batch-size 8 --max-steps 8 --bucket-cap-mb 0.01 --first-bucket-mb 0.001
        --fault skip-backward:rank=1,iter=3 --timeout-s 2)
if mpirun --oversubscribe -np 4 "$bin" "${common[@]}" --json "$out/hang" --flight-recorder "$out/flight" > "$out/hang.log" 2>&1; then
  echo "FAILED: the hang exited 0"; cat "$out/hang.log"; exit 1
fi
cat "$out/hang.log"
grep -q "ranks 0, 2, 3 entered it and wait" "$out/hang.log"
grep -q "missing from #[0-9]*: rank 1 has left the training loop" "$out/hang.log"
grep -q "culprit: rank 1: it skipped collectives of iteration 3" "$out/hang.log"
grep -q "aborting every rank" "$out/hang.log"
echo "--- the ranks' flight-recorder dumps, explained:"
[ "$(ls "$out/flight" | tr '\n' ' ')" = "nccl_trace_rank_0 nccl_trace_rank_1 nccl_trace_rank_2 nccl_trace_rank_3 " ]
"$ddpsim" explain "$out/flight" | tee "$out/explain.log"
grep -q "ranks 0, 2, 3 started mpi:all_reduce of" "$out/explain.log"
grep -q "rank 1 started mpi:barrier" "$out/explain.log"
grep -q "culprit: rank 1: collective_seq_id [0-9]*: rank 0 ran mpi:all_reduce" "$out/explain.log"
sleep 1
# Only this job's processes: their arguments name this test's output.
if pgrep -f -- "--json $out/hang" > /dev/null; then
  echo "FAILED: processes left behind:"; pgrep -af -- "--json $out/hang"; exit 1
fi
echo "--- no process left behind; now with --symmetric-skip:"
mpirun --oversubscribe -np 4 "$bin" "${common[@]}" --symmetric-skip | tee "$out/fixed.log"
grep -q "iteration 3: backward skipped by every rank" "$out/fixed.log"
grep -q "trained 8 steps on 4 rank" "$out/fixed.log"
