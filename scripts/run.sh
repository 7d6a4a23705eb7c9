#!/usr/bin/env bash
# Builds everything and runs the main program on the default model (stories260K + tok512).
set -euo pipefail
cd "$(dirname "$0")/.."
# Standard output is the story alone: the build's lines go to a log, its progress to stderr.
if [ ! -x build/medusa ]; then echo "building medusa-vk (the first run takes a few minutes)..." >&2; fi
build_log="${TMPDIR:-/tmp}/medusa-vk-build.log"
if ! scripts/build.sh >"$build_log" 2>&1; then
    tail -n 40 "$build_log" >&2
    echo "the build failed (whole log: $build_log)" >&2
    exit 1
fi
models="${MEDUSA_SHARED_DIR:-$(pwd)/../shared}/models"
if [ ! -f "$models/stories260K.bin" ]; then
    echo "no model at $models/stories260K.bin: download stories260K.bin and tok512.model from" >&2
    echo "huggingface.co/karpathy/tinyllamas (stories260K/) into $models, or set MEDUSA_SHARED_DIR" >&2
    exit 1
fi
# Medusa heads trained on this machine (self-distillation, a few minutes the first time) and a
# tree tuned for this device; both are cached and reused.
cache="${MEDUSA_CACHE:-$HOME/.cache/medusa-vk}/stories260K"
if [ ! -f "$cache/heads/medusa_lm_head.safetensors" ] || [ ! -f "$cache/tree.json" ]; then
    echo "training Medusa heads for stories260K into $cache (first run only)" >&2
    scripts/train_default_heads.sh --models stories260K --steps 1500 --eagle-steps 0 --eagle3-steps 0 >&2
fi
exec build/medusa generate -m "$models/stories260K.bin" --tokenizer "$models/tok512.model" \
    --heads "$cache/heads" --tree "$cache/tree.json" -p "${1:-Once upon a time}" -n "${2:-200}" --temp 0
