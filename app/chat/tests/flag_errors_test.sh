#!/usr/bin/env bash
# chat.flag_errors: a flag medusa-chat cannot take ends it with one line and exit code 2, as the
# command line's usage errors do (before any window opens); --version prints the version alone.
#   usage: flag_errors_test.sh APP
set -uo pipefail
app=$1
fail=0
for args in "--nosuch" "--steps abc" "--steps" "--accept best" "--size 10x" "--temp hot"; do
    # shellcheck disable=SC2086
    err=$("$app" $args 2>&1 >/dev/null)
    rc=$?
    echo "$args -> exit $rc: $err"
    [[ $rc == 2 ]] || { echo "FAIL: '$args' exited $rc, not 2"; fail=1; }
    [[ $(printf '%s\n' "$err" | wc -l) == 1 ]] || { echo "FAIL: '$args' printed more than one line"; fail=1; }
done
out=$("$app" --version)
rc=$?
echo "--version -> exit $rc: $out"
[[ $rc == 0 && $out =~ ^medusa-chat\ [0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "FAIL: --version"; fail=1; }
[[ $fail == 0 ]] && echo PASS
exit $fail
