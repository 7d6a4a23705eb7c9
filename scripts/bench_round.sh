# Sourced by the scripts that time this engine against something else in alternating rounds
# (compare_llama_cpp.sh, compare_builds.sh): one round of `medusa bench` and the median they share.
#
# medusa_bench_round BIN TARGET VERIFY TOKENS PROMPT WORK: one JSON line {decode, prefill,
# verify_ratio, device} from BIN's bench of TARGET (a model file, or synthetic:NAME:DTYPE for random
# weights of a named shape): TOKENS decoded after a PROMPT-token prompt, forward(VERIFY)/forward(1);
# the median of 3 runs in one process.
# WORK is a folder for its files; a failed bench ends the script with its last lines.
medusa_bench_round() {
    local bin=$1 target=$2 verify=$3 tokens=$4 prompt=$5 work=$6 model
    if [[ $target == synthetic:*:* ]]; then
        IFS=: read -r _ name dtype <<<"$target"
        model=(--synthetic "$name" --dtype "$dtype")
    else
        model=(-m "$target")
    fi
    # The cache holds the prompt, the decoded tokens and a verify block after them.
    "$bin" bench "${model[@]}" --no-medusa --no-cpu --max-block "$verify" --tokens "$tokens" --prompt-tokens "$prompt" \
        --ctx-size $((prompt + tokens + verify + 64)) --runs 3 --json "$work/round.json" >"$work/round.log" 2>&1 ||
        { echo "$(basename "$0"): $bin bench failed on $target:" >&2; tail -5 "$work/round.log" >&2; exit 1; }
    jq -c --arg v "$verify" '{decode: .vulkan.decode_tokens_per_s, prefill: .vulkan.prefill_tokens_per_s,
        verify_ratio: .vulkan.forward_ratio[$v], device: .device.name}' "$work/round.json"
}

# jq: the median of an array of numbers.
JQ_MEDIAN='def med: sort | if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;'
