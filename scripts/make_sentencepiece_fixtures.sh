#!/usr/bin/env bash
# Writes the sentencepiece models with real normalization rules that the tests and fuzzers read
# (tests/data/sentencepiece/), trained by sentencepiece's own spm_train on a generated text, and
# the ids spm_encode gives for the test texts (expected_ids.tsv): the oracle the tests compare with.
#   nmt_nfkc.model  NFKC plus sentencepiece's NMT rules (its default), a 44,288-unit trie (238 KB)
#   rules.model     a BPE model with a few rules of our own, normalizing and denormalizing: a trie of
#                   one block, keys sharing prefixes ("A", "AB") and subtries (two keys to "b")
# Not part of the build: the files are committed. To regenerate them: apt-get install sentencepiece.
set -euo pipefail
out="$(cd "$(dirname "$0")/.." && pwd)/tests/data/sentencepiece"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
python3 - "$work/train.txt" <<'PY'
import random, sys
random.seed(7)
words = ["once", "upon", "a", "time", "there", "was", "little", "girl", "named", "Lily", "she", "liked", "to",
         "play", "with", "her", "dog", "café", "naïve", "ｆｕｌｌ", "ｗｉｄｔｈ", "ﬁne", "ﬂow", "①", "Ⅻ", "Straße",
         "ÉCOLE", "中文", "日本語", "  ", "x²", "½", "AB", "Ａ"]
with open(sys.argv[1], "w") as f:
    for _ in range(400):
        f.write(" ".join(random.choice(words) for _ in range(12)) + "\n")
PY
# Rules: code points in hex, source TAB target (sentencepiece's normalization_rule_tsv).
printf '41\t61\nFF21\t61\nFB01\t66 69\n41 42\t78\nFF22\t62\n42\t62\n' >"$work/rules.tsv"
printf '78\t41 42\n' >"$work/denormalize.tsv"
spm_train --input="$work/train.txt" --model_prefix="$work/nmt_nfkc" --vocab_size=60 --model_type=unigram \
    --normalization_rule_name=nmt_nfkc >/dev/null 2>&1
spm_train --input="$work/train.txt" --model_prefix="$work/rules" --vocab_size=60 --model_type=bpe \
    --normalization_rule_tsv="$work/rules.tsv" --denormalization_rule_tsv="$work/denormalize.tsv" >/dev/null 2>&1
cp "$work/nmt_nfkc.model" "$work/rules.model" "$out/"
# The texts of tests/test_sentencepiece_charsmap.cpp, one per line.
texts=("Hello, world! ＡＢＣ ﬁne café ①② Ⅻ x² ½ Straße" "AB ABAB ＡＢ ﬁﬁ aAbB" "  leading   and trailing  "
       "中文 日本語 ｆｕｌｌ ｗｉｄｔｈ")
: >"$out/expected_ids.tsv"
for model in nmt_nfkc rules; do
    for text in "${texts[@]}"; do
        ids="$(printf '%s\n' "$text" | spm_encode --model="$out/$model.model" --output_format=id)"
        printf '%s.model\t%s\t%s\n' "$model" "$text" "$ids" >>"$out/expected_ids.tsv"
    done
done
