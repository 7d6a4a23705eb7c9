#!/usr/bin/env bash
# What serving costs over decoding in-process: `medusa serve` against `medusa generate` on the same
# prompt, flags and device, plain and with Medusa heads, in alternating rounds (the ratios are
# measured side by side; the absolute times move with the machine's load). For each round:
#   - generate's decode tokens/s and prefill time, from its statistics line;
#   - a whole completion from serve: its own decode tokens/s, and the client's tokens/s (new tokens
#     over the request's time, HTTP and JSON included);
#   - a streamed completion: the time to its first token as a client sees it
#     (scripts/first_token_ms.mjs: from sending the request to the first text event).
# Each request's prompt starts with words of its own, so that no request reuses the cache of the
# one before (the server keeps what a new prompt shares with the last) and prefill is whole.
# Prints one table line a configuration (medians) and writes the rounds as JSON lines to OUT.
#   usage: scripts/measure_serve.sh [ROUNDS (5)] [TOKENS (128)] [OUT (serve_overhead.jsonl)]
#   heads: ${MEDUSA_CACHE:-~/.cache/medusa-vk}/stories260K/{heads,tree.json} (scripts/train_default_heads.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
bin="${MEDUSA_BIN:-build/medusa}"
[ -x "$bin" ] || scripts/build.sh
rounds="${1:-5}" tokens="${2:-128}" out="${3:-serve_overhead.jsonl}"
models="${MEDUSA_SHARED_DIR:-$(pwd)/../shared}/models"
cache="${MEDUSA_CACHE:-$HOME/.cache/medusa-vk}"
prompt="Once upon a time, there was a little girl named Lily. She loved to play outside"
base=(-m "$models/stories260K.bin" --tokenizer "$models/tok512.model" --temp 0)
heads=(--heads "$cache/stories260K/heads" --tree "$cache/stories260K/tree.json")
[ -d "$cache/stories260K/heads" ] || { echo "no heads in $cache/stories260K: run scripts/train_default_heads.sh" >&2; exit 1; }
: >"$out"
work="$(mktemp -d)"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT

# Starts a server with these flags in the background (its stdout not kept: a command
# substitution would wait for it); `wait_port NAME` prints its port once it listens.
start_server() {
    local name="$1"
    shift
    "$bin" serve "${base[@]}" "$@" --port 0 --quiet >/dev/null 2>"$work/serve-$name.err" &
    pids+=($!)
}
wait_port() {
    for _ in $(seq 600); do
        local port
        port="$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9]*\).*|\1|p' "$work/serve-$1.err")"
        [ -n "$port" ] && { echo "$port"; return; }
        sleep 0.1
    done
    echo "medusa serve did not start: $(cat "$work/serve-$1.err")" >&2
    exit 1
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2)}'; }

start_server plain
start_server heads "${heads[@]}"
declare -A port
port[plain]="$(wait_port plain)"
port[heads]="$(wait_port heads)"
# The prompt with a prefix of its own (see above).
request_body() { jq -nc --arg p "$1 $prompt" --argjson n "$tokens" --argjson s "$2" '{prompt: $p, max_tokens: $n, stream: $s}'; }
for round in $(seq "$rounds"); do
    for config in plain heads; do
        flags=()
        [ "$config" = heads ] && flags=("${heads[@]}")
        stats="$("$bin" generate "${base[@]}" "${flags[@]}" -p "$prompt" -n "$tokens" 2>&1 >/dev/null | grep 'tokens/s')"
        gen_tps="$(sed -n 's/.* at \([0-9.]*\) tokens\/s.*/\1/p' <<<"$stats")"
        gen_prefill="$(sed -n 's/.* prompt tokens in \([0-9.]*\) ms.*/\1/p' <<<"$stats")"
        url="http://127.0.0.1:${port[$config]}/v1/completions"
        reply="$(curl -s -w '\n%{time_total}' -H 'Content-Type: application/json' -d "$(request_body "Whole $round." false)" "$url")"
        total="$(tail -n1 <<<"$reply")"
        json="$(head -n -1 <<<"$reply")"
        ttft="$(node scripts/first_token_ms.mjs "$url" "$(request_body "Streamed $round." true)")"
        jq -nc --arg config "$config" --argjson round "$round" --argjson gen_tps "$gen_tps" --argjson gen_prefill_ms "$gen_prefill" \
            --argjson total_s "$total" --argjson ttft_ms "$ttft" --argjson reply "$json" \
            '{config: $config, round: $round, generate_tokens_per_s: $gen_tps, generate_prefill_ms: $gen_prefill_ms,
              serve_tokens_per_s: $reply.speculative.tokens_per_second, serve_prefill_ms: $reply.speculative.prefill_ms,
              serve_tokens: $reply.usage.completion_tokens, serve_steps: $reply.speculative.steps,
              client_tokens_per_s: ($reply.usage.completion_tokens / $total_s), ttft_ms: $ttft_ms}' >>"$out"
        echo "round $round/$rounds: $config" >&2
    done
done
printf '%-6s %12s %12s %10s %14s %10s %10s %14s %12s\n' config "generate t/s" "serve t/s" "serve/gen" "client t/s" "client/gen" \
    "TTFT ms" "serve prefill" "gen prefill"
for config in plain heads; do
    col() { jq -r "select(.config == \"$config\") | $1" "$out" | median; }
    g="$(col .generate_tokens_per_s)" s="$(col .serve_tokens_per_s)" c="$(col .client_tokens_per_s)"
    printf '%-6s %12.0f %12.0f %10.2f %14.0f %10.2f %10.1f %14.1f %12.1f\n' "$config" "$g" "$s" \
        "$(col '.serve_tokens_per_s / .generate_tokens_per_s')" "$c" "$(col '.client_tokens_per_s / .generate_tokens_per_s')" \
        "$(col .ttft_ms)" "$(col .serve_prefill_ms)" "$(col .generate_prefill_ms)"
done
