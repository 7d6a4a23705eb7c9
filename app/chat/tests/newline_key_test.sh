#!/usr/bin/env bash
# chat.newline_key: keys typed into a real window under Xvfb (xdotool). In the message box
# Shift+Enter and Ctrl+Enter start a new line and Enter sends: "alpha" Shift+Enter "beta" Enter,
# then, once the reply is in (the box has the keyboard again, nothing clicked), "gamma" Ctrl+Enter
# "delta" Enter. The saved chat must hold both messages with their new lines, and the app must run
# on and close cleanly on Ctrl-C (exit 130), without an assertion or a validation message.
#   usage: newline_key_test.sh XVFB_RUN APP MODEL TOKENIZER
set -euo pipefail
if [[ ${1:-} != --inside ]]; then
    command -v xdotool >/dev/null || { echo "FAIL: xdotool is not installed (scripts/install_deps.sh)"; exit 1; }
    exec "$1" -a -s "-screen 0 1600x1000x24" "$0" --inside "${@:2}"
fi
app=$2 model=$3 tokenizer=$4
dir=$(mktemp -d)
pid=""
trap '[[ -n $pid ]] && kill -9 "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
export XDG_CONFIG_HOME="$dir" MEDUSA_CHATS="$dir/chats" MEDUSA_CACHE="$dir/cache" MEDUSA_VALIDATION=1
width=1280 height=720
"$app" -m "$model" --tokenizer "$tokenizer" --size "${width}x$height" 2>"$dir/err" &
pid=$!

fail() {
    echo "FAIL: $1"
    if ! kill -0 "$pid" 2>/dev/null; then
        rc=0
        wait "$pid" || rc=$?
        echo "medusa-chat exited with $rc"
    fi
    cat "$dir/err"
    grep -hs '"prompt"' "$dir"/chats/*.json | cut -c1-200  # the messages sent
    exit 1
}
# A key held for a moment: ImGui 1.86 reads keys as held at each frame, so a press released
# before the next frame would be lost, and one held past 0.275 s repeats.
press() {
    xdotool keydown "$@"
    sleep 0.2
    local up=()
    for ((i = $#; i >= 1; --i)); do up+=("${!i}"); done
    xdotool keyup "${up[@]}"
    sleep 0.3
}
# Waits up to 30 s for a saved chat holding `text` (as JSON writes it).
saved() {
    for _ in $(seq 60); do
        grep -qsF "$1" "$dir"/chats/*.json && return 0
        kill -0 "$pid" 2>/dev/null || return 1
        sleep 0.5
    done
    return 1
}

window=$(timeout 30 xdotool search --sync --onlyvisible --name '^medusa-chat' | head -1) || fail "no window"
sleep 2  # the first frames
kill -0 "$pid" 2>/dev/null || fail "the app ended at start"
# No window manager: the keyboard goes to the window under the pointer. Click into the message box,
# whose middle sits 92 px above the window's bottom with the buttons in one row or two (15 px
# font), then select the text the box starts with, to type over it.
xdotool mousemove --window "$window" 480 $((height - 92)) click 1
sleep 0.5
press ctrl a
xdotool type --delay 80 alpha
press shift Return
xdotool type --delay 80 beta
press Return
saved '"alpha\nbeta"' || fail "no saved chat with the message alpha\\nbeta"
sleep 1
xdotool type --delay 80 gamma
press ctrl Return
xdotool type --delay 80 delta
press Return
saved '"gamma\ndelta"' || fail "no saved chat with the second message gamma\\ndelta"
kill -0 "$pid" 2>/dev/null || fail "the app ended"
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
pid=""
echo "exit code $rc; stderr: $(cat "$dir/err")"
[[ $rc == 130 ]] || fail "expected exit code 130 after Ctrl-C"
! grep -qi "assert\|validation" "$dir/err" || fail "an assertion or validation message"
echo "PASS"
