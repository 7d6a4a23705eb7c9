#!/usr/bin/env python3
"""Writes the crafted seed files of the parsers fuzzed since issue 13 into fuzz/corpus/<target>/.

Real files are not copied here: scripts/run_fuzzers.sh seeds those at run time (models/trees/*.json,
../shared/models/*.model, tests/data/sentencepiece/*.model and their normalization rules, and the
vocabularies of ../shared/models/gguf/*.gguf). What this writes is
small: real-world config.json files as their projects publish them, tiny files that load, and
hostile ones (deep nesting, huge numbers, NaN, wrong types, truncations).
usage: fuzz/corpus/make_seeds.py
"""
import json
import os
import struct

root = os.path.dirname(os.path.abspath(__file__))


def write(target, name, data):
    os.makedirs(os.path.join(root, target), exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(root, target, name), "wb") as f:
        f.write(data)


DEEP = "[" * 600 + "]" * 600
DEEP_OBJ = '{"a":' * 600 + "1" + "}" * 600

# --- fuzz_tree_json: Medusa trees (a list of rank paths, or an object holding one) and specs.
t = "fuzz_tree_json"
write(t, "object.json", json.dumps({"medusa_choices": [[0], [0, 0], [1], [0, 1], [0, 0, 0]]}))
write(t, "choices.json", json.dumps({"choices": [[0], [1], [2], [0, 0]]}))
write(t, "dense.txt", "dense:3,2,1")
write(t, "chain.txt", "chain:7")
write(t, "empty-list.json", "[]")
write(t, "deep.json", DEEP)
write(t, "huge-rank.json", "[[0], [99999999999999999999999], [-9223372036854775809]]")
write(t, "float-rank.json", "[[0], [1.5], [1e308], [NaN]]")
write(t, "string-rank.json", '[[0], ["1"], [null], [true]]')
write(t, "no-parent.json", "[[0], [1, 0, 0]]")
write(t, "twice.json", "[[0], [0]]")
write(t, "too-deep.json", json.dumps([[0] * d for d in range(1, 9)]))
write(t, "too-many.json", json.dumps([[a] for a in range(10)] + [[a, b] for a in range(10) for b in range(10)] +
                                      [[0, 0, c] for c in range(10)]))
write(t, "truncated.json", "[[0], [0, 0], [1")
write(t, "dense-huge.txt", "dense:10,10,10,10,10,10,10,10,99999999999")

# --- fuzz_hf_config: Hugging Face config.json.
t = "fuzz_hf_config"
tiny = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 8, "intermediate_size": 16,
        "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1, "vocab_size": 4,
        "max_position_embeddings": 64, "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "hidden_act": "silu",
        "tie_word_embeddings": False, "torch_dtype": "float32"}
write(t, "tiny-llama.json", json.dumps(tiny, indent=2))
write(t, "tiny-qwen2.json", json.dumps(dict(tiny, model_type="qwen2", tie_word_embeddings=True), indent=2))
write(t, "tiny-llama3.json", json.dumps(dict(tiny, rope_theta=500000.0, rope_scaling={
    "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192,
    "rope_type": "llama3"}), indent=2))
write(t, "tiny-linear.json", json.dumps(dict(tiny, rope_scaling={"type": "linear", "factor": 4.0}), indent=2))
# The other families' keys over the same shape (the tiny file lacks their extra tensors, so these
# are refused after their keys are read): Qwen3's head_dim, Gemma 3's windows, layer kinds, local
# RoPE base and GELU, its multimodal wrapper, Phi-3's partial rotary and LongRoPE factors.
write(t, "tiny-qwen3.json", json.dumps(dict(tiny, architectures=["Qwen3ForCausalLM"], model_type="qwen3",
                                            head_dim=8), indent=2))
gemma3 = dict(tiny, architectures=["Gemma3ForCausalLM"], model_type="gemma3_text", head_dim=4, sliding_window=16,
              layer_types=["sliding_attention"], rope_local_base_freq=10000.0, query_pre_attn_scalar=4,
              hidden_activation="gelu_pytorch_tanh", rope_scaling={"rope_type": "linear", "factor": 8.0})
write(t, "tiny-gemma3.json", json.dumps(gemma3, indent=2))
write(t, "tiny-gemma3-multimodal.json", json.dumps({"architectures": ["Gemma3ForConditionalGeneration"],
                                                    "model_type": "gemma3", "text_config": gemma3}, indent=2))
write(t, "tiny-phi3.json", json.dumps(dict(tiny, architectures=["Phi3ForCausalLM"], model_type="phi3",
                                           partial_rotary_factor=0.5, original_max_position_embeddings=32,
                                           rope_scaling={"type": "longrope", "short_factor": [1.0],
                                                         "long_factor": [2.0]}), indent=2))
# Published configs: meta-llama/Llama-2-7b-hf, TinyLlama-1.1B-Chat-v1.0, Qwen2-0.5B-Instruct, Llama-3.1-8B.
write(t, "llama-2-7b.json", json.dumps({
    "_name_or_path": "meta-llama/Llama-2-7b-hf", "architectures": ["LlamaForCausalLM"], "bos_token_id": 1,
    "eos_token_id": 2, "hidden_act": "silu", "hidden_size": 4096, "initializer_range": 0.02,
    "intermediate_size": 11008, "max_position_embeddings": 4096, "model_type": "llama", "num_attention_heads": 32,
    "num_hidden_layers": 32, "num_key_value_heads": 32, "pretraining_tp": 1, "rms_norm_eps": 1e-05,
    "rope_scaling": None, "tie_word_embeddings": False, "torch_dtype": "float16", "transformers_version": "4.31.0.dev0",
    "use_cache": True, "vocab_size": 32000}, indent=2))
write(t, "tinyllama-chat.json", json.dumps({
    "architectures": ["LlamaForCausalLM"], "attention_bias": False, "bos_token_id": 1, "eos_token_id": 2,
    "hidden_act": "silu", "hidden_size": 2048, "initializer_range": 0.02, "intermediate_size": 5632,
    "max_position_embeddings": 2048, "model_type": "llama", "num_attention_heads": 32, "num_hidden_layers": 22,
    "num_key_value_heads": 4, "pretraining_tp": 1, "rms_norm_eps": 1e-05, "rope_scaling": None, "rope_theta": 10000.0,
    "tie_word_embeddings": False, "torch_dtype": "bfloat16", "transformers_version": "4.35.0", "use_cache": True,
    "vocab_size": 32000}, indent=2))
write(t, "qwen2-0.5b-instruct.json", json.dumps({
    "architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 151643, "eos_token_id": 151645,
    "hidden_act": "silu", "hidden_size": 896, "initializer_range": 0.02, "intermediate_size": 4864,
    "max_position_embeddings": 32768, "max_window_layers": 24, "model_type": "qwen2", "num_attention_heads": 14,
    "num_hidden_layers": 24, "num_key_value_heads": 2, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
    "sliding_window": 32768, "tie_word_embeddings": True, "torch_dtype": "bfloat16",
    "transformers_version": "4.40.1", "use_cache": True, "use_sliding_window": False, "vocab_size": 151936}, indent=2))
write(t, "llama-3.1-8b.json", json.dumps({
    "architectures": ["LlamaForCausalLM"], "attention_bias": False, "attention_dropout": 0.0, "bos_token_id": 128000,
    "eos_token_id": 128001, "hidden_act": "silu", "hidden_size": 4096, "initializer_range": 0.02,
    "intermediate_size": 14336, "max_position_embeddings": 131072, "mlp_bias": False, "model_type": "llama",
    "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8, "pretraining_tp": 1,
    "rms_norm_eps": 1e-05, "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                             "original_max_position_embeddings": 8192, "rope_type": "llama3"},
    "rope_theta": 500000.0, "tie_word_embeddings": False, "torch_dtype": "bfloat16", "transformers_version": "4.43.0.dev0",
    "use_cache": True, "vocab_size": 128256}, indent=2))
hostile = json.dumps(tiny)
write(t, "huge-numbers.json", hostile.replace('"hidden_size": 8', '"hidden_size": 1e400')
      .replace('"vocab_size": 4', '"vocab_size": 18446744073709551616'))
write(t, "nan.json", hostile.replace('"rope_theta": 10000.0', '"rope_theta": NaN'))
write(t, "tiny-rope-factor.json", json.dumps(dict(tiny, rope_scaling={"rope_type": "llama3", "factor": 1e300})))
write(t, "wrong-types.json", json.dumps(dict(tiny, hidden_size="8", model_type=["llama"], tie_word_embeddings=1,
                                             rope_scaling=[1, 2])))
write(t, "deep.json", '{"model_type": "llama", "x": ' + DEEP + "}")
write(t, "not-object.json", "[1, 2, 3]")
write(t, "truncated.json", json.dumps(tiny)[:70])

# --- fuzz_medusa_heads_config: config.json beside Medusa head files.
t = "fuzz_medusa_heads_config"
# FasterDecoding/medusa-vicuna-7b-v1.3, and what save_medusa_heads writes (TGI layout).
write(t, "medusa-vicuna-7b.json", json.dumps({"medusa_num_heads": 5, "medusa_num_layers": 1,
                                              "base_model_name_or_path": "lmsys/vicuna-7b-v1.3"}, indent=2))
write(t, "tiny-medusa.json", json.dumps({"medusa_num_heads": 3, "medusa_num_layers": 2, "hidden_size": 8,
                                         "vocab_size": 4, "base_model_name_or_path": "tiny"}, indent=2))
write(t, "tiny-legacy.json", json.dumps({"medusa_num_heads": 2, "medusa_num_layers": 1}))
# vLLM's MedusaConfig with one shared lm_head.
write(t, "tiny-vllm.json", json.dumps({"model_type": "medusa", "architectures": ["MedusaModel"], "hidden_size": 8,
                                       "vocab_size": 4, "num_heads": 2, "num_hidden_layers": 1,
                                       "original_lm_head": True, "medusa_fc_bias": False, "truncated_vocab_size": None}))
write(t, "empty.json", "{}")
write(t, "huge.json", '{"medusa_num_heads": 18446744073709551615, "num_heads": -9223372036854775808}')
write(t, "wrong-types.json", '{"medusa_num_heads": "5", "medusa_num_layers": 1.0, "original_lm_head": "yes", '
                             '"num_heads": null}')
write(t, "nan.json", '{"medusa_num_heads": NaN, "medusa_num_layers": 1e999}')
write(t, "deep.json", '{"medusa_num_heads": ' + DEEP_OBJ + "}")
write(t, "truncated.json", '{"medusa_num_heads": 3, "medusa_num')

# --- fuzz_eagle_config: EAGLE draft layer config.json.
t = "fuzz_eagle_config"
# yuhuili/EAGLE-Vicuna-7B-v1.3's config.json: a one-layer LlamaConfig with "bias".
write(t, "eagle-vicuna-7b.json", json.dumps({
    "architectures": ["LlamaForCausalLM"], "bias": True, "bos_token_id": 1, "eos_token_id": 2, "hidden_act": "silu",
    "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 11008, "max_position_embeddings": 2048,
    "model_type": "llama", "num_attention_heads": 32, "num_hidden_layers": 1, "pad_token_id": 0,
    "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "torch_dtype": "float16", "transformers_version": "4.28.1",
    "use_cache": True, "vocab_size": 32000}, indent=2))
eagle = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 8, "intermediate_size": 16,
         "num_attention_heads": 2, "num_key_value_heads": 1, "num_hidden_layers": 1, "rms_norm_eps": 1e-06,
         "rope_theta": 10000.0, "hidden_act": "silu", "bias": True, "torch_dtype": "float32",
         "base_model_name_or_path": "tiny"}
write(t, "tiny.json", json.dumps(eagle, indent=2))
write(t, "tiny-no-bias.json", json.dumps(dict(eagle, bias=False)))
write(t, "tiny-extremes.json", json.dumps(dict(eagle, rms_norm_eps=1e-60, rope_theta=1e300)))
write(t, "huge.json", json.dumps(eagle).replace('"hidden_size": 8', '"hidden_size": 18446744073709551615'))
write(t, "layers.json", json.dumps(dict(eagle, num_hidden_layers=2)))
write(t, "nan.json", json.dumps(eagle).replace('"rope_theta": 10000.0', '"rope_theta": NaN'))
write(t, "wrong-types.json", json.dumps(dict(eagle, hidden_size="8", bias="yes", rope_scaling={"type": "linear"})))
write(t, "deep.json", '{"hidden_size": 8, "rope_scaling": ' + DEEP_OBJ + "}")
write(t, "truncated.json", json.dumps(eagle)[:50])


# --- fuzz_sentencepiece_model: serialized ModelProto (sentencepiece_model.proto), written by hand.
def varint(v):
    v &= (1 << 64) - 1
    out = b""
    while v >= 0x80:
        out += bytes([(v & 0x7F) | 0x80])
        v >>= 7
    return out + bytes([v])


def fvarint(field, v):
    return varint(field << 3) + varint(v)


def fbytes(field, b):
    if isinstance(b, str):
        b = b.encode()
    return varint(field << 3 | 2) + varint(len(b)) + b


def ffloat(field, f):
    return varint(field << 3 | 5) + struct.pack("<f", f)


def model_proto(pieces, model_type, byte_fallback=False, extra_trainer=b"", dummy_prefix=True):
    """pieces: (text, score, type); types 1 normal, 2 unknown, 3 control, 4 user defined, 6 byte."""
    m = b"".join(fbytes(1, fbytes(1, p) + ffloat(2, s) + fvarint(3, ty)) for p, s, ty in pieces)
    trainer = fvarint(3, model_type) + fvarint(4, len(pieces)) + fvarint(35, int(byte_fallback)) + \
        fvarint(40, 0) + fvarint(41, 1) + fvarint(42, 2) + fvarint(43, (1 << 64) - 1) + extra_trainer
    m += fbytes(2, trainer)
    m += fbytes(3, fbytes(1, "identity") + fvarint(3, int(dummy_prefix)) + fvarint(4, 0) + fvarint(5, 1))
    return m


specials = [("<unk>", 0.0, 2), ("<s>", 0.0, 3), ("</s>", 0.0, 3)]
letters = [(c, -float(i), 1) for i, c in enumerate("abcdefghijklmnopqrstuvwxyz.,!")]
words = [("\u2581" + w, -float(i) / 2, 1) for i, w in enumerate(["the", "a", "once", "upon", "time", "\u2581"])]
byte_pieces = [("<0x%02X>" % b, 0.0, 6) for b in range(256)]
t = "fuzz_sentencepiece_model"
write(t, "unigram.model", model_proto(specials + words + letters, 1))
write(t, "bpe-bytes.model", model_proto(specials + byte_pieces + letters + words, 2, byte_fallback=True))
write(t, "word.model", model_proto(specials + words, 3))
write(t, "char.model", model_proto(specials + letters + [("<tool>", 0.0, 4)], 4))
write(t, "empty-piece.model", model_proto(specials + [("", 0.0, 1)] + letters, 1))
write(t, "twice.model", model_proto(specials + letters + letters[:3], 2))
write(t, "all-control.model", model_proto(specials + [(p, s, 3) for p, s, _ in letters], 1))
write(t, "no-unknown.model", model_proto([(p, s, 1) for p, s, _ in specials] + letters, 1))
write(t, "bad-byte.model", model_proto(specials + [("<0xZZ>", 0.0, 6)] + letters, 2, byte_fallback=True))
write(t, "truncated.model", model_proto(specials + words + letters, 1)[:150])
write(t, "empty.model", b"")
# Gemma's kind: no space in front of the text, user-defined pieces (a run of spaces, a tag) cut out
# of the text by the engine itself.
write(t, "user-defined-no-prefix.model",
      model_proto(specials + byte_pieces + letters + words + [("  ", 0.0, 4), ("<b>", 0.0, 4), ("\n\n", 0.0, 4)], 2,
                  byte_fallback=True, dummy_prefix=False))


# --- fuzz_gguf_spm_vocab: vocabulary-only GGUF files with a "llama" (sentencepiece) vocabulary.
def gguf_string(s):
    b = s.encode() if isinstance(s, str) else s
    return struct.pack("<Q", len(b)) + b


def gguf_kv(key, vtype, payload):
    return gguf_string(key) + struct.pack("<I", vtype) + payload


def gguf_vocab(tokens, scores=None, types=None, bos=1, eos=2, unk=0, model="llama", extra=()):
    kvs = [gguf_kv("general.architecture", 8, gguf_string("llama")),
           gguf_kv("tokenizer.ggml.model", 8, gguf_string(model)),
           gguf_kv("tokenizer.ggml.tokens", 9, struct.pack("<IQ", 8, len(tokens)) +
                   b"".join(gguf_string(x) for x in tokens))]
    if scores is not None:
        kvs.append(gguf_kv("tokenizer.ggml.scores", 9, struct.pack("<IQ", 6, len(scores)) +
                           b"".join(struct.pack("<f", s) for s in scores)))
    if types is not None:
        kvs.append(gguf_kv("tokenizer.ggml.token_type", 9, struct.pack("<IQ", 5, len(types)) +
                           b"".join(struct.pack("<i", x) for x in types)))
    for key, v in [("bos", bos), ("eos", eos), ("unknown", unk)]:
        if v is not None:
            kvs.append(gguf_kv("tokenizer.ggml.%s_token_id" % key, 4, struct.pack("<I", v & 0xFFFFFFFF)))
    kvs += list(extra)
    return b"GGUF" + struct.pack("<IQQ", 3, 0, len(kvs)) + b"".join(kvs)


t = "fuzz_gguf_spm_vocab"
base = [p for p, _, _ in specials + words + letters]
base_scores = [s for _, s, _ in specials + words + letters]
base_types = [ty for _, _, ty in specials + words + letters]
with_bytes = base + [p for p, _, _ in byte_pieces]
write(t, "tiny-llama.gguf", gguf_vocab(base, base_scores, base_types))
write(t, "tiny-bytes.gguf", gguf_vocab(with_bytes, base_scores + [0.0] * 256, base_types + [6] * 256))
write(t, "tiny-untyped.gguf", gguf_vocab(base, None, None))
# Phi-3 types <unk> as control and its padding pieces as unknown; llama.cpp copes, so must we.
write(t, "phi3-types.gguf", gguf_vocab(base + ["<pad1>", "<pad2>"], None, [3] + base_types[1:] + [2, 2]))
write(t, "bad-byte.gguf", gguf_vocab(base + ["<0xZZ>"], None, base_types + [6]))
write(t, "twice.gguf", gguf_vocab(base + ["a"], None, None))
write(t, "empty-piece.gguf", gguf_vocab(base + [""], None, None))
write(t, "ids-out-of-range.gguf", gguf_vocab(base, None, None, bos=-1, eos=1 << 31, unk=len(base)))
write(t, "unk-is-bos.gguf", gguf_vocab(base, None, None, unk=1))
write(t, "scores-short.gguf", gguf_vocab(base, [float("nan"), float("inf")], [99, -5]))
write(t, "bpe-model.gguf", gguf_vocab(base, None, None, model="gpt2"))
write(t, "truncated.gguf", gguf_vocab(base, base_scores, base_types)[:200])
# Gemma 3's kind: no space prefix (a boolean key), user-defined spaces and tags, "</s>" user-defined
# (llama.cpp makes it control); a model named Phi-3 (whitespace after its specials is dropped);
# the space-prefix key of the wrong type.
gemma = ["<pad>", "<eos>", "<bos>", "<unk>"] + [p for p, _, _ in words + letters + byte_pieces] + \
    ["  ", "<b>", "</s>", "<end_of_turn>", "<|user|>"]
gemma_types = [3, 3, 3, 2] + [1] * (len(words) + len(letters)) + [6] * 256 + [4, 4, 4, 3, 4]
gemma_scores = [0.0] * 4 + [s for _, s, _ in words + letters] + [0.0] * 256 + [-1000.0] * 5
write(t, "gemma-no-prefix.gguf", gguf_vocab(gemma, gemma_scores, gemma_types, bos=2, eos=1, unk=3,
                                            extra=[gguf_kv("tokenizer.ggml.add_space_prefix", 7, b"\x00")]))
write(t, "phi3-named.gguf", gguf_vocab(gemma, None, gemma_types, bos=2, eos=1, unk=3,
                                       extra=[gguf_kv("general.name", 8, gguf_string("Phi3"))]))
write(t, "prefix-not-bool.gguf", gguf_vocab(base, None, None, extra=[gguf_kv("tokenizer.ggml.add_space_prefix", 4,
                                                                             struct.pack("<I", 0))]))

# --- fuzz_bpe_vocab: its seeds as they are, and tiny-qwen2.gguf's vocabulary with the gpt-4o
# pre-tokenizer (Phi-4-mini's).
qwen = open(os.path.join(root, "fuzz_bpe_vocab", "tiny-qwen2.gguf"), "rb").read()
pre = gguf_string("tokenizer.ggml.pre") + struct.pack("<I", 8)
assert qwen.count(pre + gguf_string("qwen2")) == 1
write("fuzz_bpe_vocab", "tiny-gpt-4o.gguf", qwen.replace(pre + gguf_string("qwen2"), pre + gguf_string("gpt-4o")))

# --- fuzz_chat_template: tokenizer_config.json / config.json texts and Jinja templates.
t = "fuzz_chat_template"
jinja = {
    "llama3": "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = "
              "'<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'+ message['content'] | trim + "
              "'<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}"
              "{{ content }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant"
              "<|end_header_id|>\\n\\n' }}{% endif %}",
    "chatml": "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + "
              "'<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
              "{% endif %}",
    "llama2": "{% if messages[0]['role'] == 'system' %}{% set system_message = '<<SYS>>\\n' + "
              "messages[0]['content'] | trim + '\\n<</SYS>>\\n\\n' %}{% endif %}{% for message in messages %}"
              "{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content | trim + ' [/INST]' }}"
              "{% elif message['role'] == 'assistant' %}{{ ' ' + content | trim + ' ' + eos_token }}{% endif %}"
              "{% endfor %}",
    "zephyr": "{% for message in messages %}\n{% if message['role'] == 'user' %}\n{{ '<|user|>\\n' + "
              "message['content'] + eos_token }}\n{% elif message['role'] == 'assistant' %}\n{{ '<|assistant|>\\n'"
              "  + message['content'] + eos_token }}\n{% endif %}\n{% endfor %}",
    "vicuna": "{% for message in messages %}{% if message['role'] == 'user' %}{{ 'USER: ' + message['content'] + ' ' }}"
              "{% else %}{{ 'ASSISTANT: ' + message['content'] + eos_token }}{% endif %}{% endfor %}"
              "{% if add_generation_prompt %}{{ 'ASSISTANT:' }}{% endif %}",
}
for name, text in jinja.items():
    write(t, "tokenizer_config-%s.json" % name, json.dumps({"add_bos_token": True, "bos_token": "<s>",
                                                             "chat_template": text}, indent=2))
write(t, "template.jinja", jinja["chatml"])
write(t, "named-templates.json", json.dumps({"chat_template": [{"name": "tool_use", "template": jinja["llama3"]},
                                                               {"name": "default", "template": jinja["zephyr"]}]}))
write(t, "config-vicuna.json", json.dumps({"_name_or_path": "lmsys/vicuna-7b-v1.5",
                                           "architectures": ["LlamaForCausalLM"]}))
write(t, "config-qwen.json", json.dumps({"_name_or_path": "Qwen/Qwen2-0.5B-Instruct"}))
write(t, "phi3.json", json.dumps({"chat_template": "{{'<|user|>\\n' + message['content'] + '<|end|>\\n'"
                                                   "}}{{ '<|assistant|>\\n' }}"}))
write(t, "stops.txt", "Sure, here it is.</s>USER: and <|im_end|><|im_start|><|eot_id|>")
write(t, "wrong-types.json", '{"chat_template": 42, "_name_or_path": ["x"]}')
write(t, "named-wrong.json", '{"chat_template": [1, {"name": 2, "template": "x"}, {"name": "default"}]}')
write(t, "deep.json", '{"chat_template": ' + DEEP + "}")
write(t, "not-object.json", '"<|im_start|>"')
write(t, "truncated.json", json.dumps({"chat_template": jinja["llama2"]})[:90])


# --- fuzz_sentencepiece_charsmap: precompiled_charsmap blobs (a darts-clone trie, then the rules'
# replacements, each ending in NUL), crafted unit by unit as tests/test_sentencepiece_charsmap.cpp
# crafts them. The real ones (spm_train's, in tests/data/sentencepiece/) are seeded by the script.
UNUSED = 0x80000000  # a leaf's label: no byte matches it


class Trie:
    def __init__(self, blocks):
        self.units = [UNUSED] * (256 * blocks)

    def root(self, state):
        self.units[0] = state << 10

    def edge(self, state, byte, to, leaf=False, value=0):
        unit = state ^ byte
        self.units[unit] = (unit ^ to) << 10 | (0x100 if leaf else 0) | byte
        if leaf:
            self.units[to] = UNUSED | value

    def blob(self, replacements, trie_bytes=None):
        size = len(self.units) * 4 if trie_bytes is None else trie_bytes
        return struct.pack("<I%dI" % len(self.units), size, *self.units) + replacements


def chain(key, every=False, value=0):
    t = Trie(len(key) + 2)
    t.root(256)
    for i, c in enumerate(key):
        t.edge(256 * (i + 1), c, 256 * (i + 2), every or i + 1 == len(key), value)
    return t


t = "fuzz_sentencepiece_charsmap"
h = chain(b"h")
write(t, "h.bin", h.blob(b"X\0"))
shared = Trie(4)
shared.root(256)
shared.edge(256, ord("a"), 512)
shared.edge(256, ord("c"), 512)
shared.edge(512, ord("b"), 768, True, 2)
write(t, "shared-subtrie.bin", shared.blob(b"X\0Y\0"))
write(t, "32-rules.bin", chain(b"h" * 32, every=True).blob(b"X\0"))
write(t, "33-rules.bin", chain(b"h" * 33, every=True).blob(b"X\0"))
far = Trie(1)
far.units[0] = 0x1FFFFF << 10 | 0x200
write(t, "root-far.bin", far.blob(b"X\0"))
write(t, "value-far.bin", chain(b"h", value=0x7FFFFF00).blob(b"X\0"))
write(t, "unterminated.bin", h.blob(b"X"))
write(t, "size-lies.bin", h.blob(b"", len(h.units) * 4 + 3))
loop = Trie(2)
loop.root(256)
loop.edge(256, ord("h"), 256, True, 0)
write(t, "loop.bin", loop.blob(b"X\0"))

# --- fuzz_torch_pickle: hostile structures (protocol 2, as torch.save writes).
t = "fuzz_torch_pickle"


def short_string(s):
    return b"\x8c" + bytes([len(s)]) + s


TENSOR = (b"ctorch._utils\n_rebuild_tensor_v2\n((" + short_string(b"storage") + b"ctorch\nFloatStorage\n" +
          short_string(b"0") + short_string(b"cpu") + b"K\x04tQK\x00K\x04\x85K\x01\x85\x89tR")


def laughs(fanout, levels):
    """level 0 holds a tensor; each level above holds the one below under `fanout` keys."""
    p = b"\x80\x02}q\x00(" + short_string(b"w") + TENSOR + b"u"
    for level in range(1, levels + 1):
        p += b"}q" + bytes([level]) + b"(" + b"".join(short_string(b"k%d" % k) + b"h" + bytes([level - 1])
                                                      for k in range(fanout)) + b"u"
    return p + b"."


write(t, "billion-laughs.pkl", laughs(8, 8))
write(t, "shared-twice.pkl", laughs(2, 1))
write(t, "chain-9-dicts.pkl", laughs(1, 8))
write(t, "self-holding.pkl", b"\x80\x02}q\x00" + short_string(b"me") + b"h\x00s.")
write(t, "list-holding-itself.pkl", b"\x80\x02}q\x00" + short_string(b"l") + b"]q\x01h\x01as.")
write(t, "memo-far.pkl", b"\x80\x02}r\x00\x00\x00\x40.")
write(t, "memoize.pkl", b"\x80\x04}\x94" + short_string(b"a") + b"\x94h\x00s.")

# --- fuzz_tokenizer_json: pre-tokenizers of real tokenizers and regexes that backtrack.
t = "fuzz_tokenizer_json"


def tokenizer_json(pre_tokenizer):
    byte_chars = []
    n = 0
    for b in range(256):
        printable = ord("!") <= b <= ord("~") or 0xA1 <= b <= 0xAC or 0xAE <= b <= 0xFF
        byte_chars.append(chr(b) if printable else chr(256 + n))
        n += 0 if printable else 1
    vocab = {c: i for i, c in enumerate(byte_chars)}
    merges = [["\u0120", "t"], ["h", "e"], ["\u0120t", "he"], ["i", "n"], ["\u0120", "a"]]
    for a, b in merges:
        vocab[a + b] = len(vocab)
    return json.dumps({"added_tokens": [{"id": len(vocab), "content": "<|endoftext|>", "special": True}],
                       "pre_tokenizer": pre_tokenizer,
                       "model": {"type": "BPE", "vocab": vocab, "merges": merges}})


def split(regex):
    return {"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated", "invert": False}


LLAMA3 = ("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
          "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
QWEN2 = ("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
         "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}
write(t, "llama3.json", tokenizer_json({"type": "Sequence", "pretokenizers": [split(LLAMA3), byte_level]}))
write(t, "qwen2.json", tokenizer_json({"type": "Sequence", "pretokenizers": [split(QWEN2), byte_level]}))
write(t, "deepseek-coder.json", tokenizer_json({"type": "Sequence", "pretokenizers": [
    split("[\\r\\n]"), split("\\s?\\p{L}+"), split("\\s?\\p{P}+"), split("[\\x{4E00}-\\x{9FA5}]+"),
    {"type": "Digits", "individual_digits": True}, byte_level]}))
# Nested quantifiers: exponential backtracking at every position (refused by the split budget).
for name, regex in [("nested-alternation", "(?:a|aa){1,21}(?=b)|a"), ("nested-plus", "(a+)+$|\\s|."),
                    ("words-star", "(\\w+\\s?)*$|\\S"), ("lookbehind", "(?<=\\p{L}{3})\\p{L}+|(?:\\s|\\S)")]:
    write(t, name + ".json", tokenizer_json({"type": "Sequence", "pretokenizers": [split(regex), byte_level]}))

# --- fuzz_cost_model: cost-model.json, whole caches and single entries.
t = "fuzz_cost_model"
curve = [{"tokens": n, "ms": round(0.5 + 0.14 * n, 3)} for n in (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)]
device = "llvmpipe (LLVM 15.0.6, 256 bits) | llvmpipe Mesa 22.3.6 (LLVM 15.0.6)"
write(t, "entry.json", json.dumps({"verify_ms": curve, "position": 58}))
write(t, "cache.json", json.dumps({device: {
    "f32 64x172x5 v512": {"verify_ms": curve, "position": 128, "saved": 3},
    "drafter eagle f32 64x172x5 v512 top-8": {"level_ms": 0.41, "saved": 2},
    "drafter draft q8_0 64x172x5 v512": {"level_ms": 0.22, "saved": 1}}}))
write(t, "old-cache.json", json.dumps({device: {"f32 64x172x5 v512": {"verify_ms": curve, "position": 128}},
                                       "cpu reference": {"drafter test": {"level_ms": 1.25}}}, indent=2))
write(t, "many-entries.json", json.dumps({"dev %d" % d: {"model %d" % e: {"verify_ms": curve[:1], "saved": d * 80 + e}
                                                         for e in range(70)} for d in range(10)}))
write(t, "huge-entry.json", json.dumps({device: {"m": {"verify_ms": [{"tokens": n, "ms": n} for n in range(1, 400)]},
                                                 "drafter x": {"level_ms": 1, "saved": 7}}}))
write(t, "long-key.json", json.dumps({"d" * 1100: {"m": {"verify_ms": curve[:1]}}, device: {"m": {"verify_ms": curve}}}))
write(t, "bad-saved.json", json.dumps({device: {"drafter x": {"level_ms": 1, "saved": -1}}}))
write(t, "wrong-shape.json", json.dumps({device: {"f32": {"verify_ms": "fast"}}, "x": 3}))
write(t, "deep.json", DEEP_OBJ)
write(t, "truncated.json", '{"dev": {"m": {"verify_ms": [{"tokens": 1, "ms"')

# --- fuzz_kernel_tuning: kernel-tuning.json.
t = "fuzz_kernel_tuning"
model = "f32 64x172x5 v512"
write(t, "tuned.json", json.dumps({device: {model: {"texel": True, "workgroup": 64, "rows": 1, "subgroup": 8,
                                                    "decode_ms_per_token": 0.41}}}, indent=2))
write(t, "old.json", json.dumps({device: {model: {"texel": False, "workgroup": 256, "rows": 4}}}))
write(t, "below-subgroup.json", json.dumps({device: {model: {"texel": True, "workgroup": w}
                                                     for w in (1, 2, 4)} | {"q8_0": {"texel": True, "workgroup": 4}}}))
write(t, "other-subgroup.json", json.dumps({"radv | RADV": {model: {"texel": False, "workgroup": 32, "subgroup": 32},
                                                            "q4_0": {"texel": False, "workgroup": 64, "subgroup": 64}}}))
write(t, "hostile.json", json.dumps({device: {"a": {"texel": True, "workgroup": 2 ** 40}, "b": {"texel": 1, "workgroup": 64},
                                              "c": {"texel": True, "workgroup": 96}, "d": {"texel": True, "workgroup": 64,
                                              "rows": 9}, "e": {"texel": True, "workgroup": 64, "subgroup": "8"},
                                              "f": [], "g": {"texel": True, "workgroup": 8192}}}))
write(t, "deep.json", DEEP_OBJ)
write(t, "truncated.json", '{"dev": {"m": {"texel": true, "workgroup"')

# --- fuzz_hf_sentencepiece_folder: tokenizer_config.json, tokenizer.json and config.json of a
# folder whose tokenizer.json is a sentencepiece-style BPE, joined by NUL bytes.
t = "fuzz_hf_sentencepiece_folder"
spm_json = {"model": {"type": "BPE", "byte_fallback": True, "vocab": {}}}


def folder(config, tokenizer, cfg):
    return "\0".join(json.dumps(x) for x in (config, tokenizer, cfg))


phi_added = [{"id": 270 + i, "content": c, "special": True, "rstrip": i > 0}
             for i, c in enumerate(["<|endoftext|>", "<|user|>", "<|end|>"])]
write(t, "phi3.bin", folder({"bos_token": "<s>", "eos_token": "<|endoftext|>",
                             "added_tokens_decoder": {str(a["id"]): {k: v for k, v in a.items() if k != "id"}
                                                      for a in phi_added}},
                            dict(spm_json, added_tokens=phi_added), {"vocab_size": 280}))
write(t, "gemma-user-defined.bin", folder({"bos_token": {"content": "<s>"}},
                                          dict(spm_json, added_tokens=[{"id": 266, "content": "\u2581\u2581",
                                                                        "special": False}]),
                                          {"model_type": "gemma3", "text_config": {"vocab_size": 300}}))
write(t, "hostile.bin", folder({"added_tokens_decoder": {"x": {"content": "a"}, "-1": {"content": ""}}},
                               dict(spm_json, added_tokens=[{"id": 2 ** 40, "content": "z"}, {"content": 5}]),
                               {"vocab_size": 3}))
