#!/usr/bin/env bash
# chat.trained_by_content: medusa-chat opened on a copy of stories260K under another name finds
# the heads and tuned tree trained for it in the cache, by the model's content, and its status line
# and the turn's mode name them; llama2xs, of the same shapes, is not given them.
#   usage: trained_by_content_test.sh XVFB_RUN APP MEDUSA MODELS_DIR
set -euo pipefail
xvfb_run=$1 app=$2 medusa=$3 models=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp "$models/stories260K.bin" "$dir/my-renamed-model.bin"
# The folder keeps the original's name: a lookup by file name would miss the copy.
"$medusa" train-heads -m "$models/stories260K.bin" --tokenizer "$models/tok512.model" --heads 4 --steps 5 \
    --sequences 4 --out "$dir/cache/stories260K/heads" >/dev/null 2>&1
echo '{"medusa_choices": [[0], [0, 0], [1], [0, 0, 0]]}' >"$dir/cache/stories260K/tree.json"
shot() {  # model, output prefix
    XDG_CONFIG_HOME="$dir/config" MEDUSA_CHATS="$dir/chats" MEDUSA_CACHE="$dir/cache" MEDUSA_VALIDATION=1 \
        "$xvfb_run" -a -s "-screen 0 1600x1000x24" "$app" -m "$1" --tokenizer "$models/tok512.model" \
        --prompt "Once upon a time" --steps 4 --fixed-shape --screenshot "$2.png" 2>"$2.err"
}
shot "$dir/my-renamed-model.bin" "$dir/copy"
status=$(grep -o '"status": *"[^"]*"' "$dir/copy.png.json" || true)
mode=$(grep -o '"mode": *"[^"]*"' "$dir/copy.png.json" || true)
echo "copy: $status; $mode"
[[ $status == *"heads $dir/cache/stories260K/heads"* ]] || { echo "FAIL: the status line names no cached heads"; exit 1; }
[[ $status == *"5-node tree $dir/cache/stories260K/tree.json"* ]] || { echo "FAIL: no tuned tree"; exit 1; }
[[ $mode == *"tree.json, 4 heads"* ]] || { echo "FAIL: the turn's mode does not name the tuned tree"; exit 1; }
shot "$models/llama2xs.bin" "$dir/other"
status=$(grep -o '"status": *"[^"]*"' "$dir/other.png.json" || true)
echo "llama2xs: $status"
[[ $status == *"untrained heads"* && $status != *"$dir/cache"* ]] || { echo "FAIL: llama2xs was given another model's heads"; exit 1; }
! grep -qi "validation" "$dir/copy.err" "$dir/other.err" || { echo "FAIL: validation messages"; exit 1; }
echo "PASS"
