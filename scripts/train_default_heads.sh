#!/usr/bin/env bash
# Trains Medusa heads (self-distillation, on this machine's GPU), tunes the kernels and a tree for this device and
# trains EAGLE-2 and EAGLE-3 draft layers, for stories260K and llama2xs, into a cache folder (default
# ~/.cache/medusa-vk, or $MEDUSA_CACHE):
#   <cache>/<model>/heads/{medusa_lm_head.safetensors,config.json,accuracy.json}
#   <cache>/<model>/tree.json   (medusa_choices + the budget/time table)
#   <cache>/<model>/eagle/{model.safetensors,config.json,accuracy.json}   (EAGLE's layout)
#   <cache>/<model>/eagle3/{model.safetensors,config.json,accuracy.json}  (SafeAILab's EAGLE-3 layout)
#   <cache>/kernel-tuning.json  (the matrix kernels' fastest configuration per device and model shape)
# Usage: scripts/train_default_heads.sh [--steps N] [--eagle-steps N (0: no EAGLE)]
#        [--eagle3-steps N (0: no EAGLE-3)] [--resume]
#        [--models "stories260K llama2xs"]   (MEDUSA_BIN picks the binary)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${MEDUSA_BIN:-build/medusa}"
[ -x "$bin" ] || scripts/build.sh
models="${MEDUSA_SHARED_DIR:-$(pwd)/../shared}/models"
cache="${MEDUSA_CACHE:-$HOME/.cache/medusa-vk}"
steps=2000
eagle_steps=1000  # the held-out accuracy of stories260K levels off by ~1,200 steps
eagle3_steps=600  # training-time test: stories260K's held-out accuracy levels off by ~500 steps
resume=()
model_list="stories260K llama2xs"
while [ $# -gt 0 ]; do
    case "$1" in
        --steps) steps="$2"; shift 2 ;;
        --eagle-steps) eagle_steps="$2"; shift 2 ;;
        --eagle3-steps) eagle3_steps="$2"; shift 2 ;;
        --resume) resume=(--resume); shift ;;
        --models) model_list="$2"; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
for model in $model_list; do
    out="$cache/$model"
    mkdir -p "$out"
    echo "== $model: training 4 heads ($steps steps) into $out/heads" >&2
    "$bin" train-heads -m "$models/$model.bin" --tokenizer "$models/tok512.model" --heads 4 \
        --out "$out/heads" --steps "$steps" --sequences 256 --lr 0.01 "${resume[@]}"
    echo "== $model: tuning the matrix kernels for this device into $cache/kernel-tuning.json" >&2
    # Before the tree: the tree's timings use the kernels this device runs fastest.
    MEDUSA_CACHE="$cache" "$bin" bench --tune-kernels -m "$models/$model.bin" --tune-out "$cache/kernel-tuning.json"
    echo "== $model: tuning the tree for this device into $out/tree.json" >&2
    # The measured optimum decides the tree, even where it is small (a CPU driver pays for every node).
    "$bin" tune-tree -m "$models/$model.bin" --tokenizer "$models/tok512.model" --heads "$out/heads" \
        --out "$out/tree.json"
    if [ "$eagle_steps" -gt 0 ]; then
        echo "== $model: training an EAGLE layer ($eagle_steps steps) into $out/eagle" >&2
        # The heads' self-distilled text is the same recipe (model, seed, sizes): reuse it.
        mkdir -p "$out/eagle"
        cp -n "$out/heads/train_data.safetensors" "$out/heads/heldout_data.safetensors" "$out/eagle/" 2>/dev/null || true
        "$bin" train-eagle -m "$models/$model.bin" --tokenizer "$models/tok512.model" \
            --out "$out/eagle" --steps "$eagle_steps" --sequences 256 "${resume[@]}"
    fi
    if [ "$eagle3_steps" -gt 0 ]; then
        echo "== $model: training an EAGLE-3 layer ($eagle3_steps steps) into $out/eagle3" >&2
        # Layers 0, 2 and 4: low, middle and high of these 5-layer models (SafeAILab's rule,
        # 2, L/2 and L-3, collapses to layer 2 alone on them).
        "$bin" train-eagle --eagle3 -m "$models/$model.bin" --tokenizer "$models/tok512.model" \
            --out "$out/eagle3" --steps "$eagle3_steps" --sequences 256 --layers 0,2,4 "${resume[@]}"
    fi
done
