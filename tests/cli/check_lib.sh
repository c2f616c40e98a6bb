# Shared by the end-to-end CLI scripts (source it): a scratch folder removed on exit, `check`
# that counts passes and prints a failed check's output, `expect_error` for bad-input cases, and
# `finish`, which prints the tally and sets the exit status.
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
passed=0
failed=0

check() {  # check NAME COMMAND...: passes when COMMAND exits 0
  local name="$1"
  shift
  if "$@" >"$work/out" 2>"$work/err"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL: $name"
    sed 's/^/  out: /' "$work/out" | head -30
    sed 's/^/  err: /' "$work/err" | head -20
  fi
}

# expect_error STATUS TEXT ARGS...: `$ddlsim ARGS` exits with STATUS and its stderr contains TEXT.
expect_error() {
  local status="$1" text="$2"
  shift 2
  "$ddlsim" "$@" >"$work/stdout" 2>"$work/stderr"
  local got=$?
  [[ $got -eq $status ]] || { echo "exit status $got, expected $status"; cat "$work/stderr"; return 1; }
  grep -qF -- "$text" "$work/stderr" || { echo "stderr lacks: $text"; cat "$work/stderr"; return 1; }
}

finish() {
  echo "$passed passed, $failed failed"
  [[ $failed -eq 0 ]]
}
