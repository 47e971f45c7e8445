#!/usr/bin/env bash
# FSDP kill-and-resume and resharding proof (ddpsim-real train --strategy fsdp).
#  1-4. kill_resume_test.sh under FSDP: 2 ranks, sharded checkpoints, rank 1
#     killed at a random step, resumed bit-identical; a corrupt shard of the
#     newest checkpoint: the previous complete one, bit-identical;
#  5. resharding: the checkpoint of step 6 written by 2 ranks resumed on 4 and
#     on 3 ranks equals DDP resumed on 4 and 3 ranks from DDP's checkpoint of
#     step 6 (a run that had that world size from the checkpoint on), within
#     1e-6; so does a HYBRID_SHARD checkpoint of 4 ranks as 2 nodes of 2 (two
#     shards) resumed as FULL_SHARD on 3.
# Usage: fsdp_resume_test.sh DDPSIM_REAL OUT_DIR [STEP]   (STEP in 5..33 reproduces a run)
set -euo pipefail
bin=$1 out=$2
rm -rf "$out" && mkdir -p "$out"
# 1 to 4: kill_resume_test.sh's proof under FSDP.
"$(dirname "$0")/kill_resume_test.sh" "$bin" "$out/kill" "${3:-}" fsdp

# 5. Resharding, against DDP on the same path.
reshard=(train --dataset-size 96 --batch-size 4 --epochs 2 --widths 8,32,32,1 --checkpoint-every 6 --timeout-s 60)
mpirun --oversubscribe -np 2 "$bin" "${reshard[@]}" --strategy fsdp --checkpoint-dir "$out/fsdp6" --max-steps 6 > /dev/null
mpirun --oversubscribe -np 2 "$bin" "${reshard[@]}" --checkpoint-dir "$out/ddp6" --max-steps 6 > /dev/null
for w in 4 3; do
  cp -r "$out/fsdp6" "$out/fsdp6_w$w" && cp -r "$out/ddp6" "$out/ddp6_w$w"
  mpirun --oversubscribe -np $w "$bin" "${reshard[@]}" --strategy fsdp --checkpoint-dir "$out/fsdp6_w$w" --resume \
    --params "$out/fsdp_w$w.bin" > "$out/fsdp_w$w.log"
  grep -m1 "elastic resume" "$out/fsdp_w$w.log"
  mpirun --oversubscribe -np $w "$bin" "${reshard[@]}" --checkpoint-dir "$out/ddp6_w$w" --resume \
    --params "$out/ddp_w$w.bin" > /dev/null
  echo "resharded from 2 ranks to $w:"
  "$bin" compare "$out/ddp_w$w.bin" "$out/fsdp_w$w.bin" --rtol 1e-6
done
# A hybrid checkpoint: 2 shards of 4 ranks, resumed as FULL_SHARD on 3.
mpirun --oversubscribe -np 4 "$bin" "${reshard[@]}" --strategy fsdp --sharding hybrid --ranks-per-node 2 \
  --checkpoint-dir "$out/hybrid6" --max-steps 6 > /dev/null
mpirun --oversubscribe -np 4 "$bin" "${reshard[@]}" --checkpoint-dir "$out/ddp6_4" --max-steps 6 > /dev/null
mpirun --oversubscribe -np 3 "$bin" "${reshard[@]}" --strategy fsdp --checkpoint-dir "$out/hybrid6" --resume \
  --params "$out/hybrid_w3.bin" > "$out/hybrid_w3.log"
grep -m1 "resuming from" "$out/hybrid_w3.log"
mpirun --oversubscribe -np 3 "$bin" "${reshard[@]}" --checkpoint-dir "$out/ddp6_4" --resume --params "$out/ddp4_w3.bin" > /dev/null
echo "a hybrid checkpoint (2 shards of 4 ranks) resharded onto 3 ranks:"
"$bin" compare "$out/ddp4_w3.bin" "$out/hybrid_w3.bin" --rtol 1e-6
