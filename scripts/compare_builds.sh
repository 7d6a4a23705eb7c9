#!/usr/bin/env bash
# This build beside another one (the previous commit's, say) on the same device and files: decode
# (TOKENS new tokens), prefill (a PROMPT-token prompt) and the verify pass (forward(VERIFY)/forward(1)),
# timed in alternating rounds after one of each not counted (the baseline, then this build, ROUNDS
# times per target); each figure's median and this build's ratio to the baseline are printed, and
# with --json written.
#
#   scripts/compare_builds.sh --baseline PATH [--build PATH] [--rounds N] [--json FILE] [--tokens N]
#       [--prompt N] [--verify N] TARGET...
#   TARGET: a model file, or synthetic:NAME:DTYPE (random weights of a named shape, e.g.
#   synthetic:tinyllama-1.1b:q4_0); defaults: build/medusa, 3 rounds, 128 tokens, a 64-token prompt,
#   a verify block of 8. To make a baseline: git worktree add /tmp/base REV && /tmp/base/scripts/build.sh
set -euo pipefail
usage() { sed -n '8,12p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
baseline="" build="" rounds=3 json="" tokens=128 prompt=64 verify=8 targets=()
while [ $# -gt 0 ]; do
    case "$1" in
        --baseline) baseline=${2:-}; shift 2 ;;
        --build) build=${2:-}; shift 2 ;;
        --rounds) rounds=${2:-}; shift 2 ;;
        --json) json=${2:-}; shift 2 ;;
        --tokens) tokens=${2:-}; shift 2 ;;
        --prompt) prompt=${2:-}; shift 2 ;;
        --verify) verify=${2:-}; shift 2 ;;
        -h | --help) usage ;;
        -*) echo "compare_builds: unknown option $1" >&2; usage ;;
        *) targets+=("$1"); shift ;;
    esac
done
for n in rounds tokens prompt verify; do
    [[ ${!n} =~ ^[1-9][0-9]{0,4}$ ]] || { echo "compare_builds: --$n takes a whole number from 1, got '${!n}'" >&2; exit 2; }
done
[[ ${#targets[@]} -gt 0 ]] || usage
for t in "${targets[@]}"; do
    [[ $t == synthetic:*:* || -e $t ]] || { echo "compare_builds: $t: no such file (or synthetic:NAME:DTYPE)" >&2; exit 2; }
done
baseline=$(realpath -e "$baseline" 2>/dev/null) && [[ -x $baseline ]] ||
    { echo "compare_builds: --baseline '$baseline' is not an executable medusa" >&2; exit 2; }
cd "$(dirname "$0")/.."
command -v jq >/dev/null || scripts/install_deps.sh
if [[ -z $build ]]; then
    [ -x build/medusa ] || scripts/build.sh
    build=$PWD/build/medusa
fi
[[ -x $build ]] || { echo "compare_builds: --build '$build' is not an executable medusa" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source scripts/bench_round.sh

results=()
for target in "${targets[@]}"; do
    : >"$work/base.rounds" && : >"$work/this.rounds"
    # One round of each first, not counted: whichever ran first would build the pipelines the
    # driver's shader cache then gives the other.
    echo "$(basename "$target"): warming up both builds..." >&2
    medusa_bench_round "$baseline" "$target" "$verify" "$tokens" "$prompt" "$work" >/dev/null
    medusa_bench_round "$build" "$target" "$verify" "$tokens" "$prompt" "$work" >/dev/null
    for round in $(seq "$rounds"); do
        echo "$(basename "$target"): round $round/$rounds: baseline..." >&2
        medusa_bench_round "$baseline" "$target" "$verify" "$tokens" "$prompt" "$work" >>"$work/base.rounds"
        echo "$(basename "$target"): round $round/$rounds: this build..." >&2
        medusa_bench_round "$build" "$target" "$verify" "$tokens" "$prompt" "$work" >>"$work/this.rounds"
    done
    row=$(jq -n --arg target "$target" --slurpfile a "$work/base.rounds" --slurpfile b "$work/this.rounds" "$JQ_MEDIAN"'
        def figures(r): {decode_tokens_per_s: (r | map(.decode) | med), prefill_tokens_per_s: (r | map(.prefill) | med),
                         verify_ratio: (r | map(.verify_ratio) | med), rounds: r};
        figures($a) as $o | figures($b) as $n
        | {target: $target, device: $b[0].device, baseline: $o, this_build: $n,
           ratio: {decode: ($n.decode_tokens_per_s / $o.decode_tokens_per_s),
                   prefill: ($n.prefill_tokens_per_s / $o.prefill_tokens_per_s),
                   verify: ($n.verify_ratio / $o.verify_ratio)}}')
    results+=("$row")
    jq -r --argjson p "$prompt" --argjson v "$verify" '
        def r(x; k): x * k | round / k;
        "\(.target | split("/") | last) on \(.device), this build / the baseline:",
        "  decode   tokens/s  \(r(.this_build.decode_tokens_per_s; 10)) / \(r(.baseline.decode_tokens_per_s; 10)) = \(r(.ratio.decode; 1000))",
        "  prefill  tokens/s  \(r(.this_build.prefill_tokens_per_s; 10)) / \(r(.baseline.prefill_tokens_per_s; 10)) = \(r(.ratio.prefill; 1000))  (\($p)-token prompt)",
        "  forward(\($v))/forward(1)  \(r(.this_build.verify_ratio; 100)) / \(r(.baseline.verify_ratio; 100))"' <<<"$row"
done
if [[ -n $json ]]; then
    printf '%s\n' "${results[@]}" | jq -s --arg date "$(date -u +%FT%TZ)" --arg commit "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
        --arg build "$build" --arg baseline "$baseline" --argjson rounds "$rounds" --argjson tokens "$tokens" \
        --argjson prompt "$prompt" --argjson verify "$verify" \
        '{date: $date, commit: $commit, build: $build, baseline: $baseline, rounds: $rounds, tokens: $tokens,
          prompt_tokens: $prompt, verify_tokens: $verify, targets: .}' >"$json"
    echo "wrote $json" >&2
fi
