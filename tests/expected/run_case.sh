#!/usr/bin/env bash
# Runs one expected-output case and compares (or, with --update, rewrites) its kept output.
# Usage: run_case.sh [--update] DDLSIM REPO_ROOT NAME
# NAME is a line of tests/expected/cases.txt; its stdout must equal tests/expected/NAME.out and
# its --json report (where the case writes one) tests/expected/NAME.json, byte for byte.
set -euo pipefail
update=0
if [[ "${1:-}" == "--update" ]]; then update=1; shift; fi
if [[ $# -ne 3 ]]; then echo "usage: run_case.sh [--update] DDLSIM REPO_ROOT NAME" >&2; exit 2; fi
ddlsim="$1" root="$2" name="$3"
dir="$root/tests/expected"
line=$(awk -v n="$name" '$1 == n { $1 = ""; print substr($0, 2); exit }' "$dir/cases.txt")
if [[ -z "$line" ]]; then echo "run_case: no case '$name' in $dir/cases.txt" >&2; exit 2; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
read -r -a args <<<"${line//@JSON@/$work/report.json}"
status=0
(cd "$root" && "$ddlsim" "${args[@]}") >"$work/stdout" 2>"$work/stderr" || status=$?
if [[ $status -ne 0 ]]; then
  echo "run_case: '$name' (ddlsim $line) exited $status:" >&2
  cat "$work/stderr" >&2
  exit 1
fi
# The report's temporary path is printed ("# wrote ..."): keep it as the placeholder.
sed -i "s|$work/report.json|@JSON@|g" "$work/stdout"
if [[ $update -eq 1 ]]; then
  mkdir -p "$(dirname "$dir/$name")"
  cp "$work/stdout" "$dir/$name.out"
  if [[ -f "$work/report.json" ]]; then cp "$work/report.json" "$dir/$name.json"; fi
  exit 0
fi
failed=0
if ! diff -u "$dir/$name.out" "$work/stdout" >"$work/diff"; then
  echo "run_case: the output of '$name' changed (expected $dir/$name.out):" >&2
  head -n 60 "$work/diff" >&2
  failed=1
fi
if [[ -f "$work/report.json" || -f "$dir/$name.json" ]]; then
  if ! diff -u "$dir/$name.json" "$work/report.json" >"$work/jdiff" 2>&1; then
    echo "run_case: the --json report of '$name' changed (expected $dir/$name.json):" >&2
    head -n 60 "$work/jdiff" >&2
    failed=1
  fi
fi
if [[ $failed -ne 0 ]]; then
  echo "run_case: if the change is intended, run scripts/update-expected and review the diff" >&2
  exit 1
fi
