#!/usr/bin/env bash
# scripts/validate-llm and the large-model corpus (tests/data/llm/corpus.tsv): the table parses and
# keeps its hold-out rule, the scenarios are exactly what scripts/gen_llm_corpus.py writes from it,
# every scenario loads (`ddlsim check`) or is refused for memory, two small modelling rows run and
# print an MFU (their accuracy is not asserted), held-out rows stay out of the default run, and a
# malformed table or a missing scenario fails loudly.
# Usage: validate_llm_test.sh DDLSIM SOURCE_DIR
ddlsim="$1"
root="$2"
source "$(dirname "$0")/check_lib.sh"
script="$root/scripts/validate-llm"
python=/usr/bin/python3

table_and_split() {
  "$python" "$script" --list >"$work/list" || return 1
  [[ $(wc -l <"$work/list") -ge 25 ]] || { echo "fewer than 25 rows"; return 1; }
  grep -q $'\tholdout$' "$work/list" && grep -q $'\tmodelling$' "$work/list"
}
check "the corpus parses, has 25+ rows and both splits" table_and_split

check "the scenarios are what gen_llm_corpus.py writes from the table" \
  "$python" "$root/scripts/gen_llm_corpus.py" --check

check "every scenario loads or is refused for memory; unexpressible rows are listed" \
  "$python" "$script" --ddlsim "$ddlsim" --check

two_rows() {
  "$python" "$script" --ddlsim "$ddlsim" --names nemo2407-llama2-7b-8xh100,mb2511-llama3-8b-8xh100 \
    --json "$work/llm.json" >"$work/table" || return 1
  grep -Eq '^row +GPUs +prec +predicted +published +error +source$' "$work/table" ||
    { echo "no table header"; cat "$work/table"; return 1; }
  for name in nemo2407-llama2-7b-8xh100 mb2511-llama3-8b-8xh100; do
    grep -Eq "^$name +8 +fp8 +[0-9.]+% +[0-9.]+% +[-+][0-9.]+% +-$" "$work/table" ||
      { echo "no row for $name"; cat "$work/table"; return 1; }
  done
  grep -Eq '^# overall: 2 rows scored, 0 unscored; \|error\| median [0-9.]+% \(p90 [0-9.]+%\)$' \
    "$work/table" || { echo "no overall line"; cat "$work/table"; return 1; }
  "$python" - "$work/llm.json" <<'EOF'
import json, sys
report = json.load(open(sys.argv[1]))
assert len(report["rows"]) == 2 and not report["broken"], report
for r in report["rows"]:
    assert 0 < r["predicted_mfu"] < 1 and 0 < r["published_mfu"] < 1, r
    # The error is the throughput's, and the MFU's: the same ratio.
    ratio = r["predicted_mfu"] / r["published_mfu"] - 1
    assert abs(ratio - r["error"]) < 1e-9, r
EOF
}
check "two small modelling rows: table, rows, overall line and JSON" two_rows

refuses_held_out() {
  local held
  held=$("$python" "$script" --list | awk -F'\t' '$3 == "holdout" {print $1; exit}')
  [[ -n $held ]] || { echo "no held-out row"; return 1; }
  ! "$python" "$script" --ddlsim "$ddlsim" --names "$held" >"$work/out" 2>"$work/err4" &&
    grep -q "it is in the held-out set" "$work/err4"
}
check "a held-out row is refused in the modelling set" refuses_held_out

bad_tables() {
  printf 'bad\tline\n' >"$work/bad.tsv"
  ! "$python" "$script" --ddlsim "$ddlsim" --corpus "$work/bad.tsv" >"$work/out" 2>"$work/err5" &&
    grep -q "bad.tsv:1: expected 33 tab-separated fields" "$work/err5" || { cat "$work/err5"; return 1; }
  # A row with its split flipped breaks the rule.
  grep -v '^#' "$root/tests/data/llm/corpus.tsv" | head -3 | sed '1s/\tmodelling\t/\tholdout\t/' \
    >"$work/flipped.tsv"
  ! "$python" "$script" --ddlsim "$ddlsim" --corpus "$work/flipped.tsv" >"$work/out" 2>"$work/err6" &&
    grep -q "breaks the hold-out rule" "$work/err6" || { cat "$work/err6"; return 1; }
  # A row whose scenario is missing is an error naming it, not an unscored row.
  grep -v '^#' "$root/tests/data/llm/corpus.tsv" | head -1 | sed 's/^[^\t]*/no-such-row/' \
    >"$work/missing.tsv"
  ! "$python" "$script" --ddlsim "$ddlsim" --corpus "$work/missing.tsv" >"$work/out" 2>"$work/err7" &&
    grep -q "validate-llm: error: no-such-row: its scenario scenarios/llm-corpus/no-such-row.json is missing" \
      "$work/err7" || { cat "$work/err7"; return 1; }
}
check "a malformed table, a broken split or a missing scenario fails loudly" bad_tables

finish
