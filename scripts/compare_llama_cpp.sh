#!/usr/bin/env bash
# This engine beside llama.cpp's llama-bench on the very same GGUF files and device: decode (TOKENS
# new tokens), prefill (a PROMPT-token prompt) and the verify pass (a block of VERIFY tokens, as
# forward(VERIFY)/forward(1)), timed in alternating rounds (ours, then theirs, ROUNDS times per
# file); each figure's median and the ratios are printed, and with --json written with llama.cpp's
# backend. A llama.cpp run whose JSON names another backend than the one asked for is refused (its
# Vulkan backend silently falls back to the CPU when the loader finds no device).
#
#   scripts/compare_llama_cpp.sh --llama-bench PATH [--rounds N] [--json FILE] [--backend vulkan|cpu]
#       [--tokens N] [--prompt N] [--verify N] FILE.gguf...
#   defaults: 3 rounds, vulkan, 128 tokens, a 512-token prompt, a verify block of 8
#   PATH is llama-bench from ../shared/peers (its README); LLAMA_THREADS is its -t (default: every core).
set -euo pipefail
usage() { sed -n '9,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
llama_bench="" rounds=3 json="" backend=vulkan tokens=128 prompt=512 verify=8 files=()
while [ $# -gt 0 ]; do
    case "$1" in
        --llama-bench) llama_bench=${2:-}; shift 2 ;;
        --rounds) rounds=${2:-}; shift 2 ;;
        --json) json=${2:-}; shift 2 ;;
        --backend) backend=${2:-}; shift 2 ;;
        --tokens) tokens=${2:-}; shift 2 ;;
        --prompt) prompt=${2:-}; shift 2 ;;
        --verify) verify=${2:-}; shift 2 ;;
        -h | --help) usage ;;
        -*) echo "compare_llama_cpp: unknown option $1" >&2; usage ;;
        *) files+=("$1"); shift ;;
    esac
done
for n in rounds tokens prompt verify; do
    [[ ${!n} =~ ^[1-9][0-9]{0,4}$ ]] || { echo "compare_llama_cpp: --$n takes a whole number from 1, got '${!n}'" >&2; exit 2; }
done
[[ $backend == vulkan || $backend == cpu ]] || { echo "compare_llama_cpp: --backend takes vulkan or cpu, got '$backend'" >&2; exit 2; }
[[ -x $llama_bench ]] || { echo "compare_llama_cpp: --llama-bench '$llama_bench' is not an executable llama-bench" >&2; exit 2; }
[[ ${#files[@]} -gt 0 ]] || usage
for f in "${files[@]}"; do [[ -f $f ]] || { echo "compare_llama_cpp: $f: no such file" >&2; exit 2; }; done
cd "$(dirname "$0")/.."
command -v jq >/dev/null || scripts/install_deps.sh
[ -x build/medusa ] || scripts/build.sh
medusa=$PWD/build/medusa
threads=${LLAMA_THREADS:-$(nproc)}
want_backend=$([[ $backend == vulkan ]] && echo Vulkan || echo CPU)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source scripts/bench_round.sh

ours() {  # file -> one JSON line {decode, prefill, verify_ratio, device}
    medusa_bench_round "$medusa" "$1" "$verify" "$tokens" "$prompt" "$work"
}

theirs() {  # file -> one JSON line {decode, prefill, verify_ratio, backend, device}
    local env=() gpu=()
    # Lavapipe counts as a CPU device to llama.cpp and is skipped unless named.
    [[ $backend == vulkan ]] && env=(env GGML_VK_VISIBLE_DEVICES=0) && gpu=(-ngl 99)
    "${env[@]}" "$llama_bench" -m "$1" -p "$prompt,$verify" -n "$tokens" -r 1 -t "$threads" "${gpu[@]}" -o json \
        >"$work/theirs.json" 2>"$work/theirs.log" ||
        { echo "compare_llama_cpp: llama-bench failed on $1:" >&2; tail -5 "$work/theirs.log" >&2; exit 1; }
    local ran
    ran=$(jq -r '[.[].backends] | unique | join(",")' "$work/theirs.json")
    if [[ $ran != *"$want_backend"* ]]; then
        echo "compare_llama_cpp: llama-bench ran on '$ran', not $want_backend, for $1 (no $backend device" \
             "found?): refused" >&2
        exit 1
    fi
    # forward(V)/forward(1): a V-token prompt's time against one decoded token's.
    jq -c --argjson p "$prompt" --argjson v "$verify" --argjson n "$tokens" --arg b "$ran" '
        (map(select(.n_prompt == $p and .n_gen == 0))[0].avg_ts) as $prefill
        | (map(select(.n_prompt == $v and .n_gen == 0))[0].avg_ts) as $verify
        | (map(select(.n_gen == $n))[0].avg_ts) as $decode
        | {decode: $decode, prefill: $prefill, verify_ratio: ($v * $decode / $verify), backend: $b,
           device: (.[0].gpu_info // .[0].cpu_info)}' "$work/theirs.json"
}

results=()
for file in "${files[@]}"; do
    : >"$work/ours.rounds" && : >"$work/theirs.rounds"
    # One bench of ours first, not counted, so that round 1 does not time the driver building its
    # pipelines (llama-bench warms up by itself).
    ours "$file" >/dev/null
    for round in $(seq "$rounds"); do
        echo "$(basename "$file"): round $round/$rounds: medusa..." >&2
        ours "$file" >>"$work/ours.rounds"
        echo "$(basename "$file"): round $round/$rounds: llama.cpp ($backend)..." >&2
        theirs "$file" >>"$work/theirs.rounds"
    done
    row=$(jq -n --arg file "$file" --slurpfile a "$work/ours.rounds" --slurpfile b "$work/theirs.rounds" "$JQ_MEDIAN"'
        def figures(r): {decode_tokens_per_s: (r | map(.decode) | med), prefill_tokens_per_s: (r | map(.prefill) | med),
                         verify_ratio: (r | map(.verify_ratio) | med), rounds: r};
        figures($a) as $o | figures($b) as $t
        | {file: $file, medusa: ($o + {device: $a[0].device}),
           llama_cpp: ($t + {backend: $b[0].backend, device: $b[0].device}),
           ratio: {decode: ($o.decode_tokens_per_s / $t.decode_tokens_per_s),
                   prefill: ($o.prefill_tokens_per_s / $t.prefill_tokens_per_s),
                   verify: ($o.verify_ratio / $t.verify_ratio)}}')
    results+=("$row")
    jq -r --argjson p "$prompt" --argjson v "$verify" '
        "\(.file | split("/") | last) on \(.medusa.device) (llama.cpp: \(.llama_cpp.backend)):",
        "  decode   tokens/s  medusa \(.medusa.decode_tokens_per_s * 10 | round / 10)  llama.cpp \(.llama_cpp.decode_tokens_per_s * 10 | round / 10)  ratio \(.ratio.decode * 1000 | round / 1000)",
        "  prefill  tokens/s  medusa \(.medusa.prefill_tokens_per_s * 10 | round / 10)  llama.cpp \(.llama_cpp.prefill_tokens_per_s * 10 | round / 10)  ratio \(.ratio.prefill * 1000 | round / 1000)  (\($p)-token prompt)",
        "  forward(\($v))/forward(1)  medusa \(.medusa.verify_ratio * 100 | round / 100)  llama.cpp \(.llama_cpp.verify_ratio * 100 | round / 100)"' <<<"$row"
done
if [[ -n $json ]]; then
    printf '%s\n' "${results[@]}" | jq -s --arg date "$(date -u +%FT%TZ)" --arg commit "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
        --arg bench "$llama_bench" --argjson rounds "$rounds" --argjson tokens "$tokens" --argjson prompt "$prompt" \
        --argjson verify "$verify" --arg backend "$backend" \
        '{date: $date, commit: $commit, llama_bench: $bench, backend: $backend, rounds: $rounds, tokens: $tokens,
          prompt_tokens: $prompt, verify_tokens: $verify, files: .}' >"$json"
    echo "wrote $json" >&2
fi
