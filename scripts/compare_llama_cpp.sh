#!/usr/bin/env bash
# Decode speed of this engine and of llama.cpp on the very same GGUF files, side by side:
# the two are run alternately, ROUNDS times per file, and the medians and their ratio printed.
# llama.cpp is a comparison only, never a dependency: build its llama-bench yourself from its
# public source (CPU build), and make a file both can read with `medusa export-gguf`.
#
#   scripts/compare_llama_cpp.sh LLAMA_BENCH ROUNDS TOKENS FILE.gguf...
#   LLAMA_THREADS (default: every core) is llama.cpp's -t.
set -euo pipefail
if [ $# -lt 4 ]; then
  sed -n '2,8p' "$0" >&2
  exit 2
fi
llama_bench=$1 rounds=$2 tokens=$3
shift 3
cd "$(dirname "$0")/.."
[ -x build/medusa ] || scripts/build.sh
threads=${LLAMA_THREADS:-$(nproc)}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }

for file in "$@"; do
  : >"$out/ours" && : >"$out/theirs"
  for round in $(seq "$rounds"); do
    echo "$(basename "$file"): round $round/$rounds" >&2
    build/medusa bench -m "$file" --no-medusa --no-cpu --max-block 2 --tokens "$tokens" --runs 1 --json "$out/ours.json" >/dev/null 2>&1
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["vulkan"]["decode_tokens_per_s"])' \
      "$out/ours.json" >>"$out/ours"
    "$llama_bench" -m "$file" -p 0 -n "$tokens" -t "$threads" -r 1 -o json 2>/dev/null |
      python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["avg_ts"])' >>"$out/theirs"
  done
  ours=$(median <"$out/ours") theirs=$(median <"$out/theirs")
  printf '%s: medusa %s tokens/s (%s), llama.cpp -t %s %s tokens/s (%s): ratio %.3f\n' "$(basename "$file")" \
    "$ours" "$(paste -sd, "$out/ours")" "$threads" "$theirs" "$(paste -sd, "$out/theirs")" \
    "$(python3 -c "print($ours / $theirs)")"
done
