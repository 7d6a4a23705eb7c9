#!/usr/bin/env bash
# Builds everything and runs the main program on the default model (stories260K + tok512).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
models="${MEDUSA_SHARED_DIR:-$(pwd)/../shared}/models"
if [ ! -f "$models/stories260K.bin" ]; then
    echo "no model at $models/stories260K.bin: download stories260K.bin and tok512.model from" >&2
    echo "huggingface.co/karpathy/tinyllamas (stories260K/) into $models, or set MEDUSA_SHARED_DIR" >&2
    exit 1
fi
exec build/medusa generate -m "$models/stories260K.bin" --tokenizer "$models/tok512.model" \
    -p "${1:-Once upon a time}" -n "${2:-200}" --temp 0
