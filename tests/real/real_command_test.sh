#!/bin/sh
# `ddlsim real` end to end: the table, the --json report (rows, machine, timelines), exit status 2
# for bad input and 5 for a failed run (a crashed rank), with the rank named.
set -u
ddlsim=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAILED: $*"; exit 1; }

"$ddlsim" real --ranks 3 --algo rabenseifner -b 8 -e 4KiB -f 8 --iters 2 --json "$dir/r.json" \
  > "$dir/out.txt" 2>&1 || { cat "$dir/out.txt"; fail "a small run exits 0"; }
grep -q "#wrong" "$dir/out.txt" || fail "the table has the #wrong column"
[ "$(grep -c ' rabenseifner$' "$dir/out.txt")" = 4 ] || { cat "$dir/out.txt"; fail "4 sizes"; }
grep -E ' rabenseifner$' "$dir/out.txt" | awk '$8 != "0" { exit 1 }' || fail "no wrong element"
/usr/bin/python3 - "$dir/r.json" <<'PY' || fail "the JSON report"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["backend"] == "host" and r["engine"] == "host" and r["ranks"] == 3
assert [row["bytes"] for row in r["rows"]] == [8, 64, 512, 4096], r["rows"]
assert all(row["ok"] and row["checked"] and row["wrong"] == 0 and row["time_ps"] > 0 for row in r["rows"])
assert len(r["results"]) == 4
# The rate each rank's sends achieved: positive, below loopback's memory-copy ceiling; no
# configured rate on loopback.
for row in r["rows"]:
    a = row["achieved_send"]
    assert 0 < a["min_gbps"] <= a["median_gbps"] <= a["max_gbps"] < 2000, a
    assert len(a["ranks"]) == 3 and all(x["bytes"] > 0 and x["busy_ns"] > 0 for x in a["ranks"]), a
    assert "configured_gbps" not in a and "configured_link_gbps" not in r
m = r["machine"]
assert m["host"] and m["kernel"] and m["cpus"] >= 1 and "loopback" in m["link_emulation"]
t = r["timelines"][-1]
assert t["bytes"] == 4096 and len(t["ranks"]) == 3
for rank in t["ranks"]:
    assert rank["steps"], rank
    for s in rank["steps"]:
        assert s["end_ps"] >= s["start_ps"] >= 0 and s["kind"] in ("send", "recv", "recv_reduce", "reduce", "copy")
PY

"$ddlsim" real --ranks 3 --algo rign > "$dir/bad.txt" 2>&1
[ $? = 2 ] || fail "an unknown algorithm exits 2"
grep -q "ring" "$dir/bad.txt" || fail "the error suggests ring"
"$ddlsim" real --ranks 3 --fault 1:x:crash > "$dir/bad.txt" 2>&1
[ $? = 2 ] || fail "a malformed --fault exits 2"

"$ddlsim" real --ranks 4 -b 1MiB -e 1MiB --timeout 2 --fault 2:3:crash > "$dir/crash.txt" 2>&1
[ $? = 5 ] || { cat "$dir/crash.txt"; fail "a crashed rank exits 5"; }
grep -q "rank 2 died" "$dir/crash.txt" || { cat "$dir/crash.txt"; fail "the dead rank is named"; }
grep -q "step" "$dir/crash.txt" || fail "the survivors name their steps"

# A fault on a step the schedule never reaches is bad input, not a run that "passes".
"$ddlsim" real --ranks 4 -b 1KiB -e 1KiB --iters 1 --warmup 0 --fault 2:100:crash > "$dir/bad.txt" 2>&1
[ $? = 2 ] && grep -q "step 100 is never reached" "$dir/bad.txt" && grep -q "12 steps per run" "$dir/bad.txt" ||
  { cat "$dir/bad.txt"; fail "an unreachable fault step exits 2 and says how many steps there are"; }

# Sizes as nccl-tests reads them: K = 1024.
"$ddlsim" real --ranks 2 -b 1K -e 4K -f 2 --iters 1 --warmup 0 > "$dir/k.txt" 2>&1 ||
  { cat "$dir/k.txt"; fail "-b 1K -e 4K runs"; }
[ "$(grep -E ' ring$' "$dir/k.txt" | awk '{ printf "%s ", $1 }')" = "1024 2048 4096 " ] ||
  { cat "$dir/k.txt"; fail "-b 1K -e 4K -f 2 runs 1024, 2048 and 4096 bytes"; }

# A corrupted schedule dump (one reduction turned into a plain copy) computes a wrong all-reduce:
# the check compares with the collective's definition, not with the same schedule, so it is
# caught (#wrong > 0, exit 5) and the message says the schedule itself is wrong.
"$ddlsim" schedule --ranks 4 --bytes 1K --json "$dir/s.json" > /dev/null || fail "schedule --json"
/usr/bin/python3 - "$dir/s.json" "$dir/bad-schedule.json" <<'PY' || fail "corrupting the dump"
import json, sys
d = json.load(open(sys.argv[1]))
step = next(s for s in d["programs"][0]["steps"] if s["kind"] == "recv_reduce")
step["kind"] = "recv"
del step["src"]
json.dump(d, open(sys.argv[2], "w"))
PY
"$ddlsim" real --schedule "$dir/bad-schedule.json" --iters 1 --warmup 0 > "$dir/wrong.txt" 2>&1
[ $? = 5 ] || { cat "$dir/wrong.txt"; fail "a corrupted schedule exits 5"; }
grep -E ' ring$' "$dir/wrong.txt" | awk '$8 == "0" { exit 1 }' || { cat "$dir/wrong.txt"; fail "#wrong > 0"; }
grep -q "on ranks 0, 1, 2, 3" "$dir/wrong.txt" && grep -q "the schedule itself computes a different result" "$dir/wrong.txt" ||
  { cat "$dir/wrong.txt"; fail "the wrong ranks and the cause are named"; }

# The GPU backends' flags: refused with the flag named where they do not apply; --backend nccl
# says why it cannot run here (no GPU, or a build without NCCL and how to get one).
"$ddlsim" real --ranks 2 --pace-gbps 10 > "$dir/bad.txt" 2>&1
[ $? = 2 ] && grep -q -- "--pace-gbps" "$dir/bad.txt" || { cat "$dir/bad.txt"; fail "pacing is for cuda"; }
"$ddlsim" real --ranks 2 --backend cuda --pace-gbps -1 > "$dir/bad.txt" 2>&1
[ $? = 2 ] && grep -q "Gbit/s" "$dir/bad.txt" || { cat "$dir/bad.txt"; fail "a negative pace"; }
"$ddlsim" real --ranks 2 --backend nccl --threads > "$dir/bad.txt" 2>&1
[ $? = 2 ] || { cat "$dir/bad.txt"; fail "--backend nccl --threads exits 2"; }
"$ddlsim" real --ranks 2 --backend nccl > "$dir/bad.txt" 2>&1
status=$?
if [ $status = 2 ]; then
  grep -E -q "no usable GPU|built without the NCCL backend" "$dir/bad.txt" ||
    { cat "$dir/bad.txt"; fail "--backend nccl says why it cannot run"; }
elif [ $status != 5 ] || ! grep -q "mpirun -np 2" "$dir/bad.txt"; then
  cat "$dir/bad.txt"; fail "on a GPU, two ranks without mpirun say how to start them"
fi
echo "ok: ddlsim real end to end"
