#!/usr/bin/env bash
# chat.warnings_shown: a warning the runtime raises while the app loads (here a damaged cost-model
# cache, set aside and measured again) is shown in the window's status area, not only on stderr,
# and the app decodes on.
#   usage: warnings_shown_test.sh XVFB_RUN APP MODELS_DIR
set -euo pipefail
xvfb_run=$1 app=$2 models=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/cache"
echo 'not a cost model' >"$dir/cache/cost-model.json"
XDG_CONFIG_HOME="$dir/config" MEDUSA_CHATS="$dir/chats" MEDUSA_CACHE="$dir/cache" MEDUSA_VALIDATION=1 \
    "$xvfb_run" -a -s "-screen 0 1600x1000x24" "$app" -m "$models/stories260K.bin" --tokenizer "$models/tok512.model" \
    --prompt "Once upon a time" --steps 4 --screenshot "$dir/shot.png" 2>"$dir/err"
warnings=$(tr -d '\n' <"$dir/shot.png.json" | grep -o '"warnings": *\[ *"[^"]*"' || true)
echo "$warnings"
[[ $warnings == *"cost-model.json: "*"set aside as "* ]] || { echo "FAIL: the window does not show the warning"; exit 1; }
grep -q "steps\": *4" "$dir/shot.png.json" || { echo "FAIL: the app did not decode on"; exit 1; }
[[ -f $dir/cache/cost-model.json.bad ]] || { echo "FAIL: the damaged cache was not set aside"; exit 1; }
! grep -qi "validation" "$dir/err" || { echo "FAIL: validation messages"; exit 1; }
echo "PASS"
