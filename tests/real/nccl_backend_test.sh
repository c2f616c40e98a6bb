#!/usr/bin/env bash
# GPU test: the NCCL backend under mpirun matches the reference (#wrong 0) with NCCL's own
# collective timed beside it; one process runs the degenerate single-rank case and says more ranks
# need more GPUs; two processes on one GPU are refused with that reason. Exits 77 (skipped) with
# the reason where no GPU is visible.
set -u
ddlsim=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAILED: $*"; exit 1; }
as_root=()
[[ $(id -u) == 0 ]] && as_root=(--allow-run-as-root)
mpi() { timeout 300 mpirun "${as_root[@]}" --oversubscribe -np "$@"; }

"$ddlsim" real --backend nccl --ranks 1 -b 8 -e 8 > "$dir/probe.txt" 2>&1
if grep -E -q "no usable GPU|built without the NCCL backend" "$dir/probe.txt"; then
  echo "SKIP: $(grep -o 'error: .*' "$dir/probe.txt")"
  exit 77
fi
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
[[ $gpus -ge 1 ]] || gpus=1

# wrong_ok FILE ALGO: every row of ALGO has #wrong 0 and a number in the nccl column.
rows_ok() {
  grep -E " $2\$" "$1" > "$dir/rows.txt" || return 1
  awk '$8 != "0" || $9 == "n/a" { exit 1 }' "$dir/rows.txt"
}

mpi 1 "$ddlsim" real --backend nccl --ranks 1 -b 1KiB -e 4MiB -f 64 --iters 3 \
  > "$dir/one.txt" 2>&1 || { cat "$dir/one.txt"; fail "the single-rank case runs"; }
cat "$dir/one.txt"
rows_ok "$dir/one.txt" ring || fail "single rank: #wrong 0 and an ncclAllReduce time"
grep -q "NCCL refuses two ranks on one GPU" "$dir/one.txt" || fail "says multi-rank needs GPUs"

if [[ $gpus -lt 2 ]]; then
  mpi 2 "$ddlsim" real --backend nccl --ranks 2 -b 1KiB -e 1KiB > "$dir/two.txt" 2>&1
  [[ $? != 0 ]] && grep -q "NCCL refuses two ranks on one GPU" "$dir/two.txt" ||
    { cat "$dir/two.txt"; fail "two ranks on one GPU are refused with the reason"; }
  echo "ok: NCCL backend, one GPU (multi-rank cases need 2+ GPUs: skipped)"
  exit 0
fi

n=$((gpus < 8 ? gpus : 8))
for case in "all_reduce ring" "all_reduce rabenseifner" "all_reduce double_binary_tree" \
  "all_reduce topk" "reduce_scatter ring" "all_gather bruck" "broadcast pipelined_chain" \
  "all_to_all pairwise"; do
  set -- $case
  mpi "$n" "$ddlsim" real --backend nccl --ranks "$n" --op "$1" --algo "$2" -b 4KiB -e 16MiB \
    -f 16 --iters 3 > "$dir/run.txt" 2>&1 || { cat "$dir/run.txt"; fail "$case on $n GPUs"; }
  cat "$dir/run.txt"
  rows_ok "$dir/run.txt" "$2" || fail "$case: #wrong 0 and NCCL's time beside ours"
done
mpi "$n" "$ddlsim" real --backend nccl --ranks "$n" --dtype bf16 --reduction avg -b 64KiB \
  -e 64KiB > "$dir/run.txt" 2>&1 && rows_ok "$dir/run.txt" ring || { cat "$dir/run.txt"; fail "bf16 avg"; }
echo "ok: NCCL backend on $n GPUs"
