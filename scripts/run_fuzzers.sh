#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/fuzz_*.cpp) with clang into build-fuzz/ and runs each for a
# bounded time, seeded with copies of the real model files and the small corpus committed in
# fuzz/corpus/<target>/. Exits non-zero when a target crashes; the crashing input is kept in
# build-fuzz/crashes/.
#   usage: scripts/run_fuzzers.sh [seconds per target, default 20]
set -euo pipefail

seconds="${1:-20}"
root="$(cd "$(dirname "$0")/.." && pwd)"
shared="${MEDUSA_SHARED_DIR:-$root/../shared}"
build="$root/build-fuzz"
targets=(fuzz_llama2c fuzz_gguf fuzz_safetensors fuzz_torch_pickle fuzz_torch_checkpoint fuzz_bpe_vocab fuzz_bpe_encode
         fuzz_tokenizer_json)

# The whole runtime gets coverage instrumentation (fuzzer-no-link), not just the fuzz entry points,
# or libFuzzer could not see which parser branches an input reached.
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DMEDUSA_FUZZ=ON -DMEDUSA_APP=OFF \
    -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" >/dev/null
cmake --build "$build" -j2 --target "${targets[@]}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$build/crashes"

seed() {  # seed TARGET FILES...: whole files plus their first 4 KiB (header-heavy, fast to mutate)
    local dir="$work/$1"
    shift
    mkdir -p "$dir"
    for f in "$@"; do
        [ -f "$f" ] || continue
        cp "$f" "$dir/"
        head -c 4096 "$f" >"$dir/head-$(basename "$f")"
    done
}
seed fuzz_llama2c "$shared"/models/*.bin
seed fuzz_gguf "$shared"/models/gguf/*.gguf
mkdir -p "$work/fuzz_safetensors"
# A tiny Llama in the shapes fuzz_safetensors.cpp's config expects, in each supported dtype.
if command -v python3 >/dev/null; then
    python3 - "$work/fuzz_safetensors" <<'EOF'
import json, struct, sys
shapes = {"model.embed_tokens.weight": [4, 8], "model.norm.weight": [8], "lm_head.weight": [4, 8]}
for hf, shape in [("input_layernorm", [8]), ("post_attention_layernorm", [8]), ("self_attn.q_proj", [8, 8]),
                  ("self_attn.k_proj", [4, 8]), ("self_attn.v_proj", [4, 8]), ("self_attn.o_proj", [8, 8]),
                  ("mlp.gate_proj", [16, 8]), ("mlp.down_proj", [8, 16]), ("mlp.up_proj", [16, 8])]:
    shapes["model.layers.0." + hf + ".weight"] = shape
for dtype, size in [("F32", 4), ("F16", 2), ("BF16", 2)]:
    header, data = {"__metadata__": {"format": "pt"}}, b""
    for name, shape in shapes.items():
        n = 1
        for d in shape:
            n *= d
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + n * size]}
        data += bytes((i * 37 + 11) % 64 for i in range(n * size))
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(f"{sys.argv[1]}/tiny-{dtype}.safetensors", "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)
EOF
fi
printf '\x10\x00\x00\x00\x00\x00\x00\x00{"__metadata__":{}}' >"$work/fuzz_safetensors/empty.safetensors"

for t in "${targets[@]}"; do  # the committed seeds (fuzz/corpus/README.md says how they were made)
    mkdir -p "$work/$t"
    [ -d "$root/fuzz/corpus/$t" ] && cp "$root/fuzz/corpus/$t"/* "$work/$t/"
done

status=0
for t in "${targets[@]}"; do
    echo "== $t for ${seconds}s"
    if ! "$build/$t" "$work/$t" -max_total_time="$seconds" -max_len=1400000 -timeout=30 -rss_limit_mb=4096 \
        -print_final_stats=1 -artifact_prefix="$build/crashes/$t-" >"$work/$t.log" 2>&1; then
        echo "!! $t crashed; the input is in $build/crashes/"
        tail -60 "$work/$t.log"
        status=1
    else
        grep -E "stat::number_of_executed_units|stat::new_units_added" "$work/$t.log" | sed 's/^/   /'
    fi
done
exit $status
