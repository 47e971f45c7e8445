#!/usr/bin/env bash
# Kill-and-resume proof. 2 ranks, 3 epochs of 12 steps, a checkpoint every 2
# steps keeping the last 3:
#  1. an uninterrupted run;
#  2. the same run with rank 1 killed by SIGKILL at a random step (printed);
#     mpirun must fail, and no ddpsim-real process may be left behind;
#  3. a relaunch with --resume: final parameters bit-identical to run 1;
#  4. the newest checkpoint corrupted (one byte; under FSDP, of rank 1's
#     shard): the resume falls back to the previous one, says so, and still
#     ends bit-identical.
# Usage: kill_resume_test.sh DDPSIM_REAL OUT_DIR [STEP [ddp|fsdp]]   (STEP in 5..33 reproduces a run)
set -euo pipefail
bin=$1 out=$2 program=${4:-ddp}
rm -rf "$out" && mkdir -p "$out"
common=(train --dataset-size 96 --batch-size 4 --epochs 3 --widths 8,32,32,1 --bucket-cap-mb 0.004
        --first-bucket-mb 0.001 --checkpoint-every 2 --keep-checkpoints 3 --timeout-s 60)
[ "$program" = fsdp ] && common+=(--strategy fsdp)
run() { mpirun --oversubscribe -np 2 "$bin" "$@"; }

run "${common[@]}" --checkpoint-dir "$out/ck_full" --params "$out/full.bin" > "$out/full.log"

step=${3:-}
step=${step:-$(( 5 + RANDOM % 29 ))}  # 5..33 of 36 steps: at least two checkpoints (steps 2, 4) exist
echo "killing rank 1 with SIGKILL at step $step"
if run "${common[@]}" --checkpoint-dir "$out/ck" --fault "kill:rank=1,step=$step" > "$out/killed.log" 2>&1; then
  echo "FAILED: the run with a killed rank exited 0"; exit 1
fi
grep "fault kill: SIGKILL at step $step" "$out/killed.log"
sleep 1
# Only this job's processes: their arguments name this test's checkpoint directory.
if pgrep -f -- "--checkpoint-dir $out/ck " > /dev/null; then
  echo "FAILED: processes left behind:"; pgrep -af -- "--checkpoint-dir $out/ck "; exit 1
fi
echo "no process left behind; checkpoints: $(ls "$out/ck" | tr '\n' ' ')"
cp -r "$out/ck" "$out/ck_corrupt"

run "${common[@]}" --checkpoint-dir "$out/ck" --resume --params "$out/resumed.bin" > "$out/resumed.log"
grep -m1 "resuming from" "$out/resumed.log"
"$bin" compare "$out/full.bin" "$out/resumed.bin" --rtol 0

if [ "$program" = fsdp ]; then
  newest=$(ls -d "$out/ck_corrupt"/fsdp-* | sort | tail -1)/rank1.bin
  expected="skipping .*rank1.bin"
else
  newest=$(ls "$out/ck_corrupt"/ckpt-*.bin | sort | tail -1)
  expected="checksum mismatch"
fi
printf '\xff' | dd of="$newest" bs=1 seek=100 conv=notrunc status=none
echo "corrupted $newest"
run "${common[@]}" --checkpoint-dir "$out/ck_corrupt" --resume --params "$out/fallback.bin" > "$out/fallback.log"
grep "$expected" "$out/fallback.log"
grep -m1 "resuming from" "$out/fallback.log"
"$bin" compare "$out/full.bin" "$out/fallback.bin" --rtol 0
