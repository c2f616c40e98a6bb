#!/bin/sh
# `ddlsim real --emulate` removes its namespaces when interrupted (SIGINT) in the middle of a run,
# and the next run deletes those a run killed with SIGKILL (no handler runs) left behind.
# Exits 77 (skipped) where namespaces cannot be made.
set -u
ddlsim=$1
if [ "$(id -u)" != 0 ] || ! ip netns add ddlsim-signal-probe 2>/dev/null; then
  echo "SKIP: network namespaces need root and iproute2"
  exit 77
fi
ip netns del ddlsim-signal-probe
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/slow.json" <<'JSON'
{"topology": {"nodes": [{"preset": "single-gpu-host", "count": 2, "nic_bandwidth_gbps": 0.05}]},
 "workload": {"type": "collective", "op": "all_reduce", "algorithm": "ring", "sizes": ["1MiB"]}}
JSON
"$ddlsim" real --ranks 2 -b 64MiB -e 64MiB --iters 100 --emulate "$dir/slow.json" \
  > "$dir/out.txt" 2>&1 &
pid=$!
# Wait (bounded) until its namespaces exist, then interrupt it.
i=0
while [ $i -lt 100 ] && ! ls /run/netns 2>/dev/null | grep -q "^ddlsim${pid}r1$"; do
  sleep 0.1; i=$((i + 1))
done
ls /run/netns 2>/dev/null | grep -q "^ddlsim${pid}" || { echo "FAILED: no namespaces appeared"; cat "$dir/out.txt"; kill -9 $pid; exit 1; }
sleep 0.5
kill -INT $pid
i=0
while [ $i -lt 100 ] && kill -0 $pid 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
if kill -0 $pid 2>/dev/null; then echo "FAILED: still running 10 s after SIGINT"; kill -9 $pid; exit 1; fi
if ls /run/netns 2>/dev/null | grep -q "^ddlsim${pid}"; then
  echo "FAILED: namespaces left after SIGINT:"; ls /run/netns; exit 1
fi
echo "ok: SIGINT tore the emulated cluster down"

# SIGKILL: nothing can clean up in the killed process; the next emulated run reaps its namespaces.
"$ddlsim" real --ranks 2 -b 64MiB -e 64MiB --iters 100 --emulate "$dir/slow.json" \
  > "$dir/out2.txt" 2>&1 &
pid=$!
i=0
while [ $i -lt 100 ] && ! ls /run/netns 2>/dev/null | grep -q "^ddlsim${pid}r1$"; do
  sleep 0.1; i=$((i + 1))
done
kill -9 $pid
wait $pid 2>/dev/null
# Its rank processes die with it (PR_SET_PDEATHSIG); give them a moment.
sleep 0.5
ls /run/netns 2>/dev/null | grep -q "^ddlsim${pid}" || { echo "FAILED: SIGKILL left no namespaces to reap (test setup)"; exit 1; }
"$ddlsim" real --ranks 2 -b 8 -e 8 --iters 1 --emulate "$dir/slow.json" > "$dir/out3.txt" 2>&1 || {
  echo "FAILED: the next emulated run failed"; cat "$dir/out3.txt"; exit 1; }
if ls /run/netns 2>/dev/null | grep -q "^ddlsim${pid}"; then
  echo "FAILED: namespaces of the killed run left after the next run:"; ls /run/netns; exit 1
fi
grep -q "deleted .* network namespace(s) left by an earlier run" "$dir/out3.txt" || {
  echo "FAILED: the next run did not say it reaped them"; cat "$dir/out3.txt"; exit 1; }
echo "ok: the next run reaped the namespaces SIGKILL left"
