#!/usr/bin/env bash
# One command for the figures of the machine it runs on (a GPU when one is there): builds, runs the
# test suite with the Vulkan validation layer, then measures decode speed and weight bandwidth at
# 1.1B and 7B shapes (synthetic weights of those shapes, labelled so) for f16, q8_0, q4_0 and q4_k,
# the verify cost forward(T)/forward(1), every matrix-kernel configuration (the tuner's table), the
# same shapes against llama.cpp's Vulkan backend on the same GGUF files (decode, prefill, verify), the
# step controller's cost model, and every decoding mode (EAGLE-2 beside EAGLE-3 where trained) and
# `auto` side by side on the shipped models (built-in prompt sets and a copy-heavy prompt file).
# Writes OUT/report.md (each command with what it printed) and OUT/report.json (every result).
#
#   scripts/device_report.sh [OUT]        OUT defaults to device-report/
#   MEDUSA_REPORT_SHAPES="tinyllama-1.1b"   the synthetic shapes, "" for none (default: tinyllama-1.1b llama-7b;
#                                           on a CPU Vulkan driver only tinyllama-1.1b)
#   MEDUSA_REPORT_FAMILY_SHAPES="..."       the other families' synthetic shapes, timed beside the same
#                                           dimensions as a plain Llama and against llama.cpp (default:
#                                           qwen3-0.6b gemma3-1b phi-4-mini; on a CPU Vulkan driver qwen3-0.6b)
#   MEDUSA_REPORT_SKIP_TESTS=1              measure only
#   MEDUSA_REPORT_NO_BUILD=1                use the build/ already there (a machine with no package registry)
#   MEDUSA_REPORT_SECONDS=N                 a time limit for the whole report: each step gets what is left,
#                                           and steps that find nothing left are listed as skipped
#   MEDUSA_REPORT_TEST_SECONDS=N            a time limit for the test suite alone
#   MEDUSA_REPORT_COMMIT=REV                the commit to name where the checkout has no .git
#   MEDUSA_REPORT_LLAMA_BENCH=PATH          llama.cpp's llama-bench for the side-by-side section (default:
#                                           /tmp/llama.cpp/vulkan/llama-bench, where device_bundle.sh unpacks it)
#   MEDUSA_REPORT_COMPARE_DTYPES="q4_0 f16" the weight types compared with llama.cpp (default q4_0 q8_0 q4_k f16)
#   MEDUSA_REPORT_COMPARE_ROUNDS=N          alternating rounds per file (default 2)
#   MEDUSA_REPORT_BASELINE=PATH             another build's medusa (the previous commit's) timed beside this one,
#                                           alternating (default: build/medusa-baseline, which device_bundle.sh
#                                           packs from MEDUSA_BUNDLE_BASELINE)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-device-report}
mkdir -p "$out"
models=${MEDUSA_SHARED_DIR:-$PWD/../shared}/models
cache=${MEDUSA_CACHE:-$HOME/.cache/medusa-vk}/stories260K
report="$out/report.md"
step=0
started=$SECONDS
limit=${MEDUSA_REPORT_SECONDS:-0}  # 0: none

# Seconds a step may take: what is left of the report's limit, capped at $1 where given (0: no cap);
# "spent" when the report's limit has run out.
seconds_left() {
    local cap=${1:-0} left=0
    if [[ $limit != 0 ]]; then
        left=$((limit - (SECONDS - started)))
        [[ $left -le 0 ]] && { echo spent; return; }
    fi
    if [[ $cap != 0 ]] && [[ $left == 0 || $cap -lt $left ]]; then left=$cap; fi
    echo "$left"
}

progress() {
    step=$((step + 1))
    echo "== [$step] $*" >&2
}

# Runs a command, keeps what it printed in the report under a heading, and says how it ended and how
# long it took. SECTION_SECONDS caps one section below the report's own limit.
section() {
    local title=$1
    shift
    local log="$out/$(echo "$title" | tr -c 'A-Za-z0-9\n' '-' | tr 'A-Z' 'a-z').log"
    local allowed
    allowed=$(seconds_left "${SECTION_SECONDS:-0}")
    if [[ $allowed == spent ]]; then
        progress "$title (skipped: the report's time limit is spent)"
        printf '## %s\n\nSkipped: the report'"'"'s time limit (%s s) was spent.\n\n' "$title" "$limit" >>"$report"
        return 0
    fi
    progress "$title"
    local status=0 begun=$SECONDS
    if [[ $allowed == 0 ]]; then
        "$@" >"$log" 2>&1 || status=$?
    else
        timeout --kill-after=10 "$allowed" "$@" >"$log" 2>&1 || status=$?
    fi
    {
        echo "## $title"
        echo
        echo '```sh'
        echo "$*"
        echo '```'
        echo
        echo '```'
        # Progress lines end in carriage returns; the report keeps each one's last state.
        sed 's/.*\r//' "$log" | tail -n 60
        echo '```'
        echo
        [[ $status == 0 ]] || echo "**exit code $status**$([[ $status == 124 || $status == 137 ]] && echo " (stopped at its time limit, ${allowed} s)")"
        echo "($((SECONDS - begun)) s)"
        echo
    } >>"$report"
    return 0
}

if [[ ${MEDUSA_REPORT_NO_BUILD:-0} == 1 && -x build/medusa ]]; then
    progress "build (skipped: using build/medusa)"
else
    progress "build"
    scripts/build.sh >"$out/build.log" 2>&1
fi
bin=build/medusa
device=$($bin info 2>/dev/null | sed -n 's/^ *\[0\] *//p' | head -n 1)
cpu_driver=0
[[ $device == *", cpu)"* ]] && cpu_driver=1  # "[0] NAME (VENDOR, KIND) driver ..."
{
    echo "# Device report"
    echo
    echo "$(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD 2>/dev/null || echo "${MEDUSA_REPORT_COMMIT:-unknown}"), $(uname -srm)"
    echo
    echo "Device 0: ${device:-unknown}. Synthetic models have random weights of the named shapes: their"
    echo "text is noise, their speed is real."
    echo
} >"$report"
section "Vulkan devices" $bin info

if [[ ${MEDUSA_REPORT_SKIP_TESTS:-0} == 1 ]]; then
    progress "tests (skipped)"
else
    SECTION_SECONDS=${MEDUSA_REPORT_TEST_SECONDS:-0} section "Tests with the validation layer" \
        bash -c "cd build && MEDUSA_VALIDATION=1 ctest -j$(nproc) --timeout 900 --output-on-failure"
fi

default_shapes="tinyllama-1.1b llama-7b"
[[ $cpu_driver == 1 ]] && default_shapes="tinyllama-1.1b"  # 7B at 2 tokens/minute is no measurement
shapes=${MEDUSA_REPORT_SHAPES-$default_shapes}  # set and empty: none
json_parts=()
for shape in $shapes; do
    section "Decode speed at $shape shapes, per weight type" \
        $bin bench --synthetic "$shape" --dtype f16,q8_0,q4_0,q4_k --tokens 8 --runs 3 --json "$out/synthetic-$shape.json"
    json_parts+=("\"synthetic-$shape\": $(cat "$out/synthetic-$shape.json" 2>/dev/null || echo null)")
    section "Prefill, decode and verify cost forward(T)/forward(1) at $shape shapes (q4_0)" \
        $bin bench --synthetic "$shape" --dtype q4_0 --no-cpu --no-medusa --runs 3 --json "$out/verify-$shape.json"
    json_parts+=("\"verify-$shape\": $(cat "$out/verify-$shape.json" 2>/dev/null || echo null)")
    # Attention over a long cache: single tokens and blocks verified at slot 1000, with the keys
    # split into ranges as the engine chooses (attention_splits) and in one range.
    for splits in default 1; do
        section "Verify latency at cache position 1000, $shape shapes (q4_0), attention key ranges: $splits" \
            env MEDUSA_ATTENTION_SPLITS="${splits#default}" $bin bench --synthetic "$shape" --dtype q4_0 --no-cpu --no-medusa \
            --runs 3 --tokens 32 --position 1000 \
            --json "$out/deep-$splits-$shape.json"
        json_parts+=("\"deep-$splits-$shape\": $(cat "$out/deep-$splits-$shape.json" 2>/dev/null || echo null)")
    done
    # The host's buffers (block parameters, logits) read across the bus instead of through device
    # copies: what HostBufferAccess's copies save (nothing to compare on a CPU driver).
    if [[ $cpu_driver == 0 ]]; then
        section "Prefill, decode and verify at $shape shapes (q4_0) with MEDUSA_HOST_BUFFERS=direct" \
            env MEDUSA_HOST_BUFFERS=direct $bin bench --synthetic "$shape" --dtype q4_0 --no-cpu --no-medusa --runs 3 \
            --json "$out/host-direct-$shape.json"
        json_parts+=("\"host-direct-$shape\": $(cat "$out/host-direct-$shape.json" 2>/dev/null || echo null)")
    fi
    # The subgroup layout's lanes reading one weight word a step instead of a quad of four (the
    # default): what 16-byte loads and 4x the bytes in flight give decoding (GPU layouts only).
    if [[ $cpu_driver == 0 ]]; then
        section "Decode and verify at $shape shapes (q4_0, q8_0) with MEDUSA_MATMUL_QUADS=off (a word a lane a step)" \
            env MEDUSA_MATMUL_QUADS=off $bin bench --synthetic "$shape" --dtype q4_0,q8_0 --no-cpu --no-medusa --runs 3 \
            --json "$out/words-$shape.json"
        json_parts+=("\"words-$shape\": $(cat "$out/words-$shape.json" 2>/dev/null || echo null)")
    fi
    # A 128-token prompt through the shared-memory tiles and through the matrix units (where the
    # device offers VK_NV_cooperative_matrix): what tensor cores give prefill and large verify blocks.
    if [[ $device == *"cooperative matrices"* ]]; then
        for tile in 64x32 coop64x64; do
            section "Prefill of a 128-token prompt at $shape shapes (q4_0), tiles $tile" \
                env MEDUSA_TILED_MATMUL="16:$tile" $bin bench --synthetic "$shape" --dtype q4_0 --no-cpu --no-medusa \
                --runs 3 --tokens 8 --prompt-tokens 128 --max-block 64 --json "$out/prefill-$tile-$shape.json"
            json_parts+=("\"prefill-$tile-$shape\": $(cat "$out/prefill-$tile-$shape.json" 2>/dev/null || echo null)")
        done
    fi
    # Kept in the report's folder, not the cache: the sections above measured the untuned defaults.
    section "Matrix kernel configurations at $shape shapes (q4_0): read path, workgroup, rows per subgroup" \
        $bin bench --synthetic "$shape" --dtype q4_0 --tune-kernels --tune-out "$out/kernel-tuning.json" \
        --json "$out/kernels-$shape.json"
    json_parts+=("\"kernels-$shape\": $(cat "$out/kernels-$shape.json" 2>/dev/null || echo null)")
done

# The other families (Qwen3, Gemma 3, Phi-4-mini) at their real shapes: decode per weight type, and
# beside the same dimensions as a plain Llama ("NAME:llama"), which says what the family's extra
# norms, GeGLU, windows and partial RoPE cost on this device.
default_family_shapes="qwen3-0.6b gemma3-1b phi-4-mini"
[[ $cpu_driver == 1 ]] && default_family_shapes="qwen3-0.6b"
family_shapes=${MEDUSA_REPORT_FAMILY_SHAPES-$default_family_shapes}
for shape in $family_shapes; do
    section "Decode speed at $shape shapes, per weight type" \
        $bin bench --synthetic "$shape" --dtype q8_0,q4_0 --tokens 8 --runs 3 --json "$out/synthetic-$shape.json"
    json_parts+=("\"synthetic-$shape\": $(cat "$out/synthetic-$shape.json" 2>/dev/null || echo null)")
    section "Decode speed at $shape's dimensions as a plain Llama (what the family's features cost)" \
        $bin bench --synthetic "$shape:llama" --dtype q8_0,q4_0 --tokens 8 --runs 3 --json "$out/synthetic-$shape-as-llama.json"
    json_parts+=("\"synthetic-$shape-as-llama\": $(cat "$out/synthetic-$shape-as-llama.json" 2>/dev/null || echo null)")
    section "Prefill, decode and verify cost forward(T)/forward(1) at $shape shapes (q4_0)" \
        $bin bench --synthetic "$shape" --dtype q4_0 --no-cpu --no-medusa --runs 3 --json "$out/verify-$shape.json"
    json_parts+=("\"verify-$shape\": $(cat "$out/verify-$shape.json" 2>/dev/null || echo null)")
done

# Beside llama.cpp's own Vulkan backend on the very same files: each shape exported as a GGUF per
# weight type, then both engines timed in alternating rounds (scripts/compare_llama_cpp.sh).
llama_bench=${MEDUSA_REPORT_LLAMA_BENCH:-/tmp/llama.cpp/vulkan/llama-bench}
# (not on a CPU driver unless asked: a 512-token prompt at 1.1B there takes hours)
if [[ -x $llama_bench && ($cpu_driver == 0 || -n ${MEDUSA_REPORT_LLAMA_BENCH:-}) ]]; then
    for shape in $shapes $family_shapes; do
        dtypes=${MEDUSA_REPORT_COMPARE_DTYPES:-q4_0 q8_0 q4_k f16}
        # gemma3-1b's 1152 columns are not whole q4_k blocks of 256
        [[ " $family_shapes " == *" $shape "* ]] && dtypes=${MEDUSA_REPORT_COMPARE_DTYPES:-q4_0 q8_0}
        for dtype in $dtypes; do
            gguf="$out/$shape-$dtype.gguf"
            section "Export $shape ($dtype) as GGUF for llama.cpp" \
                $bin export-gguf --synthetic "$shape" --dtype "$dtype" --tokenizer "$models/llama2-tokenizer.model" --out "$gguf"
            section "Against llama.cpp's Vulkan backend: $shape $dtype (decode 128, prefill 512, verify 8)" \
                scripts/compare_llama_cpp.sh --llama-bench "$llama_bench" --rounds "${MEDUSA_REPORT_COMPARE_ROUNDS:-2}" \
                --json "$out/llama-cpp-$shape-$dtype.json" "$gguf"
            json_parts+=("\"llama-cpp-$shape-$dtype\": $(cat "$out/llama-cpp-$shape-$dtype.json" 2>/dev/null || echo null)")
            rm -f "$gguf"  # gigabytes at 7B: one file at a time
        done
    done
else
    progress "against llama.cpp (skipped: no llama-bench at $llama_bench)"
fi

# This build beside the previous one on the same device: decode, prefill and verify at each shape
# (q4_0) and on stories260K, alternating (scripts/compare_builds.sh).
baseline=${MEDUSA_REPORT_BASELINE:-$PWD/build/medusa-baseline}
if [[ -x $baseline ]]; then
    targets=("$models/stories260K.bin")
    for shape in $shapes; do targets+=("synthetic:$shape:q4_0"); done
    section "This build against the baseline ($baseline)" \
        scripts/compare_builds.sh --baseline "$baseline" --build "$PWD/$bin" --rounds "${MEDUSA_REPORT_COMPARE_ROUNDS:-2}" \
        --json "$out/baseline.json" "${targets[@]}"
    json_parts+=("\"baseline\": $(cat "$out/baseline.json" 2>/dev/null || echo null)")
else
    progress "against the baseline (skipped: no baseline build at $baseline)"
fi

# Every drafter this checkout has: trained heads, tree and EAGLE layers come from
# scripts/train_default_heads.sh's cache; without them Medusa runs with initialised heads.
drafters=(--draft-model "$models/llama2xs.bin")
compare=plain,medusa,draft,ngram,auto
if [[ -d $cache/heads && -f $cache/tree.json ]]; then drafters+=(--heads "$cache/heads" --tree "$cache/tree.json"); fi
eagles=()
for layer in eagle eagle3; do [[ -d $cache/$layer ]] && eagles+=("$cache/$layer"); done
if [[ ${#eagles[@]} -gt 0 ]]; then
    drafters+=(--eagle "$(IFS=,; echo "${eagles[*]}")")  # EAGLE-2 beside EAGLE-3
    compare=plain,medusa,eagle,draft,ngram,auto
fi
prompts=(--prompts models/prompts/copy-heavy.json)
cpu_flag=(--no-cpu)
[[ $cpu_driver == 1 ]] && cpu_flag=()  # on a CPU driver the C++ reference is measured beside it
section "Decoding modes on stories260K (draft model llama2xs)" \
    $bin bench -m "$models/stories260K.bin" --tokenizer "$models/tok512.model" "${drafters[@]}" \
    --compare "$compare" "${prompts[@]}" --runs 5 "${cpu_flag[@]}" --json "$out/modes-stories260K.json"
json_parts+=("\"modes-stories260K\": $(cat "$out/modes-stories260K.json" 2>/dev/null || echo null)")
section "Decoding modes on llama2xs (draft model stories260K)" \
    $bin bench -m "$models/llama2xs.bin" --tokenizer "$models/tok512.model" --draft-model "$models/stories260K.bin" \
    --compare plain,medusa,draft,ngram,auto "${prompts[@]}" --runs 5 "${cpu_flag[@]}" --json "$out/modes-llama2xs.json"
json_parts+=("\"modes-llama2xs\": $(cat "$out/modes-llama2xs.json" 2>/dev/null || echo null)")

section "The step controller's cost model (verify ms by block size, per device, driver and model)" \
    cat "${MEDUSA_CACHE:-$HOME/.cache/medusa-vk}/cost-model.json"

if [[ $cpu_driver == 1 ]]; then
    {
        echo "This is a CPU Vulkan driver: where the bench above shows the C++ reference (\"cpu\") decoding"
        echo "faster than the Vulkan engine, \`medusa generate --cpu\` is the faster way to run that model here."
        echo
    } >>"$report"
fi

{
    echo "{"
    echo "\"device\": \"$(echo "${device:-unknown}" | sed 's/["\\]/ /g')\","
    echo "\"commit\": \"$(git rev-parse HEAD 2>/dev/null || echo "${MEDUSA_REPORT_COMMIT:-unknown}")\","
    echo "\"cpu_driver\": $([[ $cpu_driver == 1 ]] && echo true || echo false)"
    for part in "${json_parts[@]}"; do echo ", $part"; done
    echo "}"
} >"$out/report.json"
echo "wrote $report and $out/report.json" >&2
