#!/usr/bin/env bash
# FSDP kill-and-resume and resharding proof (ddpsim-real train --strategy fsdp).
# 2 ranks, 3 epochs of 12 steps, a sharded checkpoint every 2 steps keeping 3:
#  1. an uninterrupted run;
#  2. the same run with rank 1 killed by SIGKILL at a random step (printed):
#     mpirun fails, no ddpsim-real process is left behind;
#  3. a relaunch with --resume on 2 ranks: final parameters bit-identical to run 1;
#  4. one byte of a shard of the newest checkpoint corrupted: the resume
#     falls back to the previous complete checkpoint, says why, and still ends
#     bit-identical;
#  5. resharding: the checkpoint of step 6 written by 2 ranks resumed on 4 and
#     on 3 ranks equals DDP resumed on 4 and 3 ranks from DDP's checkpoint of
#     step 6 (a run that had that world size from the checkpoint on), within
#     1e-6; so does a HYBRID_SHARD checkpoint of 4 ranks as 2 nodes of 2 (two
#     shards) resumed as FULL_SHARD on 3.
# Usage: fsdp_resume_test.sh DDPSIM_REAL OUT_DIR [STEP]   (STEP in 5..33 reproduces a run)
set -euo pipefail
bin=$1 out=$2
rm -rf "$out" && mkdir -p "$out"
common=(train --dataset-size 96 --batch-size 4 --epochs 3 --widths 8,32,32,1 --checkpoint-every 2 --keep-checkpoints 3
        --timeout-s 60 --strategy fsdp)
run() { mpirun --oversubscribe -np 2 "$bin" "$@"; }

run "${common[@]}" --checkpoint-dir "$out/ck_full" --params "$out/full.bin" > "$out/full.log"

step=${3:-$(( 5 + RANDOM % 29 ))}
echo "killing rank 1 with SIGKILL at step $step"
if run "${common[@]}" --checkpoint-dir "$out/ck" --fault "kill:rank=1,step=$step" > "$out/killed.log" 2>&1; then
  echo "FAILED: the run with a killed rank exited 0"; exit 1
fi
grep "fault kill: SIGKILL at step $step" "$out/killed.log"
sleep 1
if pgrep -f -- "--checkpoint-dir $out/ck " > /dev/null; then
  echo "FAILED: processes left behind:"; pgrep -af -- "--checkpoint-dir $out/ck "; exit 1
fi
echo "no process left behind; checkpoints: $(ls "$out/ck" | tr '\n' ' ')"
cp -r "$out/ck" "$out/ck_corrupt"

run "${common[@]}" --checkpoint-dir "$out/ck" --resume --params "$out/resumed.bin" > "$out/resumed.log"
grep -m1 "resuming from" "$out/resumed.log"
"$bin" compare "$out/full.bin" "$out/resumed.bin" --rtol 0

newest=$(ls -d "$out/ck_corrupt"/fsdp-* | sort | tail -1)
printf '\xff' | dd of="$newest/rank1.bin" bs=1 seek=100 conv=notrunc status=none
echo "corrupted $newest/rank1.bin"
run "${common[@]}" --checkpoint-dir "$out/ck_corrupt" --resume --params "$out/fallback.bin" > "$out/fallback.log"
grep "skipping .*rank1.bin" "$out/fallback.log"
grep -m1 "resuming from" "$out/fallback.log"
"$bin" compare "$out/full.bin" "$out/fallback.bin" --rtol 0

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
