#!/usr/bin/env bash
# Elastic resume: 96 examples, batch 4. Four ranks train 3 steps of epoch 0
# (48 examples) and checkpoint; two ranks resume mid-epoch from it with the
# simulator's rule (models::resume_epoch) and finish 2 epochs. The ID logs of
# both runs together show every example exactly once in each epoch.
# Usage: elastic_test.sh DDPSIM_REAL OUT_DIR
set -euo pipefail
bin=$1 out=$2
rm -rf "$out" && mkdir -p "$out"
common=(train --dataset-size 96 --batch-size 4 --epochs 2 --checkpoint-dir "$out/ck" --checkpoint-every 3 --timeout-s 60)
mpirun --oversubscribe -np 4 "$bin" "${common[@]}" --max-steps 3 --json "$out/w4"
mpirun --oversubscribe -np 2 "$bin" "${common[@]}" --resume --json "$out/w2" > "$out/w2.log"
grep "resuming from\|elastic resume" "$out/w2.log"
"$bin" audit "$out/w4" "$out/w2" --dataset-size 96
