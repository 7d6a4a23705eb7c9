#!/usr/bin/env bash
# chat.interrupt: Ctrl-C (SIGINT) in the terminal while medusa-chat decodes under Xvfb must close
# it cleanly: exit code 130, one line saying so, the settings saved, no validation message.
#   usage: interrupt_test.sh XVFB_RUN APP MODEL TOKENIZER
set -euo pipefail
xvfb_run=$1 app=$2 model=$3 tokenizer=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
XDG_CONFIG_HOME="$dir" MEDUSA_CHATS="$dir/chats" MEDUSA_VALIDATION=1 "$xvfb_run" -a -s "-screen 0 1600x1000x24" sh -c '
    "$1" -m "$2" --tokenizer "$3" --prompt "Once upon a time" 2>"$4/err" &
    pid=$!
    sleep 6
    kill -INT "$pid"
    rc=0
    wait "$pid" || rc=$?
    echo "$rc" >"$4/rc"' sh "$app" "$model" "$tokenizer" "$dir"
rc=$(cat "$dir/rc")
err=$(cat "$dir/err")
echo "exit code $rc; stderr: $err"
[[ $rc == 130 ]] || { echo "FAIL: expected exit code 130"; exit 1; }
grep -q "^medusa-chat: interrupted; settings saved in $dir/medusa-vk/settings.json$" "$dir/err" ||
    { echo "FAIL: no 'interrupted; settings saved' line"; exit 1; }
[[ -s $dir/medusa-vk/settings.json ]] || { echo "FAIL: the settings were not saved"; exit 1; }
! grep -qi "validation" "$dir/err" || { echo "FAIL: validation messages"; exit 1; }
echo "PASS"
