#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/fuzz_*.cpp) in the shared sanitizer build (build-asan/, see
# scripts/sanitizer_build.sh) and runs each for a bounded time, seeded with copies of the real
# model files and the small corpus committed in fuzz/corpus/<target>/. Exits non-zero when a
# target crashes; the crashing input is kept in build-asan/crashes/, each target's log in
# build-asan/logs/.
#   usage: scripts/run_fuzzers.sh [seconds per target, default 20]   (as many targets at a time as cores)
#          scripts/run_fuzzers.sh --runs N [--max-time S] [--jobs J] [target ...]
# --runs: N executions per target instead of a time (the long local runs of fuzz/RESULTS.md), or
# S seconds if that comes first, J targets at a time; the corpus each run grew is kept in
# build-asan/corpus/<target>/.
set -euo pipefail

seconds=20 runs="" max_time=0 jobs=1
root="$(cd "$(dirname "$0")/.." && pwd)"
shared="${MEDUSA_SHARED_DIR:-$root/../shared}"
build="$root/build-asan"
targets=(fuzz_llama2c fuzz_gguf fuzz_safetensors fuzz_torch_pickle fuzz_torch_checkpoint fuzz_bpe_vocab fuzz_bpe_encode
         fuzz_tokenizer_json fuzz_tree_json fuzz_hf_config fuzz_medusa_heads_config fuzz_eagle_config
         fuzz_sentencepiece_model fuzz_sentencepiece_charsmap fuzz_gguf_spm_vocab fuzz_chat_template fuzz_cost_model fuzz_markdown fuzz_chat_file
         fuzz_eagle3_gguf fuzz_kernel_tuning fuzz_chart_file fuzz_serve_request fuzz_hf_sentencepiece_folder)
if [ "${1:-}" = "--runs" ]; then
    runs="$2"
    shift 2
    while [ $# -gt 0 ]; do
        case "$1" in
            --max-time) max_time="$2" ;;
            --jobs) jobs="$2" ;;
            *) break ;;
        esac
        shift 2
    done
    [ $# -gt 0 ] && targets=("$@")
else
    [ $# -gt 0 ] && seconds="$1"
    jobs="$(nproc)"  # CI's short runs: a bound in time, so every core may take a target
fi

# The whole runtime has coverage instrumentation (fuzzer-no-link), not just the fuzz entry points,
# or libFuzzer could not see which parser branches an input reached.
"$root/scripts/sanitizer_build.sh" "${targets[@]}"

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
seed fuzz_gguf "$shared"/models/gguf/*.gguf "$root"/tests/data/arch/*.gguf  # the families' tiny files: every feature live
seed fuzz_eagle3_gguf "$root"/tests/data/eagle3/gguf/*.gguf "$shared"/testdata/eagle3/*.gguf
seed fuzz_tree_json "$root"/models/trees/*.json
mkdir -p "$work/fuzz_cost_model"
printf '{"position": 58, "verify_ms": [{"tokens": 1, "ms": 0.5}, {"tokens": 2, "ms": 0.6}, {"tokens": 64, "ms": 9.5}]}' \
    >"$work/fuzz_cost_model/measured.json"
seed fuzz_sentencepiece_model "$shared"/models/*.model "$root"/tests/data/sentencepiece/*.model
mkdir -p "$work/fuzz_sentencepiece_charsmap"
# The normalization rules (precompiled_charsmap) of the models spm_train made, whole.
if command -v python3 >/dev/null; then
    python3 - "$work/fuzz_sentencepiece_charsmap" "$root"/tests/data/sentencepiece/*.model <<'EOF'
import os, sys
def varint(b, p):
    v = shift = 0
    while True:
        v |= (b[p] & 0x7F) << shift
        shift += 7
        p += 1
        if b[p - 1] < 0x80:
            return v, p
def fields(b):  # (number, payload) of each length-delimited field; other wire types skipped
    p = 0
    while p < len(b):
        key, p = varint(b, p)
        wire = key & 7
        if wire == 2:
            n, p = varint(b, p)
            yield key >> 3, b[p:p + n]
            p += n
        else:
            p = varint(b, p)[1] if wire == 0 else p + (8 if wire == 1 else 4)
for path in sys.argv[2:]:
    for number, spec in fields(open(path, "rb").read()):
        if number in (3, 5):
            for inner, charsmap in fields(spec):
                if inner == 2 and charsmap:
                    name = "%s-%s.bin" % (os.path.basename(path)[:-6], "normalizer" if number == 3 else "denormalizer")
                    open(os.path.join(sys.argv[1], name), "wb").write(charsmap)
EOF
fi
mkdir -p "$work/fuzz_gguf_spm_vocab"
# The real GGUF files' vocabularies, without their tensors: what the vocabulary loader reads.
if command -v python3 >/dev/null; then
    python3 - "$work/fuzz_gguf_spm_vocab" "$shared"/models/gguf/*.gguf <<'EOF'
import os, struct, sys
sizes = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
def skip(b, pos, vtype):  # the offset after one value of vtype
    if vtype == 8:
        return pos + 8 + struct.unpack_from("<Q", b, pos)[0]
    if vtype == 9:
        item, n = struct.unpack_from("<IQ", b, pos)
        pos += 12
        if item != 8:
            return pos + n * sizes[item]
        for _ in range(n):
            pos = skip(b, pos, 8)
        return pos
    return pos + sizes[vtype]
for path in sys.argv[2:]:
    if not os.path.isfile(path):
        continue
    b = open(path, "rb").read()
    if b[:4] != b"GGUF":
        continue
    n_kv, pos, kept = struct.unpack_from("<Q", b, 16)[0], 24, []
    for _ in range(n_kv):
        start, n = pos, struct.unpack_from("<Q", b, pos)[0]
        key = b[pos + 8:pos + 8 + n].decode()
        pos = skip(b, pos + 12 + n, struct.unpack_from("<I", b, pos + 8 + n)[0])
        if key.startswith("tokenizer.") or key == "general.architecture":
            kept.append(b[start:pos])
    with open(os.path.join(sys.argv[1], "vocab-" + os.path.basename(path)), "wb") as f:
        f.write(b[:8] + struct.pack("<QQ", 0, len(kept)) + b"".join(kept))
EOF
fi
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

mkdir -p "$build/logs"
# One target: its log in build-asan/logs/, a line of totals, and a file naming it when it crashed.
run_one() {
    local t="$1" log="$build/logs/$1.log" limit=(-max_total_time="$seconds") corpus=("$work/$1") len=(-max_len=1400000)
    local bounds=(-timeout=10 -rss_limit_mb=2048) asan="${ASAN_OPTIONS:-}"
    case "$t" in
        # The pickle machine is bounded to about 50 MB beyond its input (torch_pickle.cpp), and none
        # of its allocations comes near 64 MB. ASan's quarantine of freed memory (256 MB by default)
        # would fill the rest: at 16 MB the process stays near 80 MB.
        fuzz_torch_pickle) bounds=(-timeout=10 -rss_limit_mb=256 -malloc_limit_mb=64)
                           asan="${asan:+$asan:}quarantine_size_mb=16" ;;
        # Each input loads a model of up to 240 KB twice: with ASan's default quarantine the
        # process grew past 1.8 GB in 100,000 runs; at 16 MB, 353 MB over the corpus they grew.
        fuzz_sentencepiece_charsmap) asan="${asan:+$asan:}quarantine_size_mb=16" ;;
        # Regexes split within a budget of backtracking steps (pretokenizer.cpp): no input needs seconds.
        fuzz_tokenizer_json) bounds=(-timeout=5 -rss_limit_mb=2048) ;;
        # A message of 1 MiB lays out in about 2 s and under 500 MB here (ASan), showing at most 16
        # bytes per byte (the target checks it); a layout that grows faster than the text fails the
        # check on a short input, or runs out of these bounds on a long one.
        fuzz_markdown) bounds=(-timeout=10 -rss_limit_mb=1024) ;;
    esac
    # Configuration files and request bodies: libFuzzer's own bound (4 KiB, or the largest seed) keeps them fast.
    case "$t" in fuzz_tree_json | fuzz_hf_config | fuzz_medusa_heads_config | fuzz_eagle_config | fuzz_chat_template | fuzz_cost_model | fuzz_kernel_tuning | fuzz_chart_file | fuzz_serve_request | fuzz_hf_sentencepiece_folder) len=() ;; esac
    if [ -n "$runs" ]; then
        limit=(-runs="$runs" -max_total_time="$max_time")  # 0: no time limit
        rm -rf "$build/corpus/$t"
        mkdir -p "$build/corpus/$t"
        corpus=("$build/corpus/$t" "$work/$t")  # new units go to the first folder
    fi
    if ! ASAN_OPTIONS="$asan" "$build/$t" "${corpus[@]}" "${limit[@]}" "${len[@]}" "${bounds[@]}" \
        -print_final_stats=1 -artifact_prefix="$build/crashes/$t-" >"$log" 2>&1; then
        echo "!! $t crashed; the input is in $build/crashes/"
        tail -60 "$log"
        touch "$work/$t.crashed"
    else
        # libFuzzer's last status line: executions, coverage (cov: edges, ft: features), corpus, speed.
        echo "== $t: $(grep -E '^#[0-9]+' "$log" | tail -1)"
    fi
}

if [ -n "$runs" ]; then
    echo "== ${targets[*]}: $runs runs each (at most ${max_time}s, 0: unbounded), $jobs at a time"
else
    echo "== ${targets[*]}: ${seconds}s each"
fi
for t in "${targets[@]}"; do
    run_one "$t" &
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
done
wait
for t in "${targets[@]}"; do
    [ -e "$work/$t.crashed" ] && exit 1
done
exit 0
