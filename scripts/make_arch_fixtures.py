#!/usr/bin/python3
"""Writes tests/data/arch: tiny random-weight GGUF models of the Qwen3 (`qwen3`), Gemma 3 (`gemma3`)
and Phi-3 / Phi-4-mini (`phi3`) architectures, llama.cpp's greedy ids and logits for each
(`<stem>.logits.json`, or `<stem>.<run>.logits.json` where one file has several runs), and an
independent float64 numpy reference of the same forward passes. tests/data/arch/README.md says what
every file is and what was measured; this docstring is the how-to.

Needs, all outside the project (none of it is used by the build):
  * llama.cpp's source at commit de3ff81 (de3ff815ea7d559ee917f063901b8986f038abc6): its gguf-py
    writes and reads the GGUF files, include/ and ggml/include/ are the headers of the oracle:
      mkdir -p /tmp/nlc && cd /tmp/nlc && npm pack node-llama-cpp@3.22.1 && \
      tar xzf node-llama-cpp-3.22.1.tgz && git clone package/llama/gitRelease.bundle /tmp/llama-src
  * libllama of the same commit, prebuilt, CPU backends (from ../shared/peers):
      mkdir -p /tmp/llama.cpp && tar -C /tmp/llama.cpp -xJf ../shared/peers/llama.cpp-de3ff81-kit.txz
  * ../shared/testdata/ggml/quant/oracle-a-f32.gguf: its tokenizer.ggml.* keys (the 512-piece tok512
    sentencepiece vocabulary) are copied into every model;
  * Debian's /usr/bin/python3 with numpy, and g++.

Run from the project root (a few seconds on one core; it is deterministic, a second run gives
byte-identical files):
    /usr/bin/python3 scripts/make_arch_fixtures.py [--llama-src /tmp/llama-src] \
        [--llama-lib /tmp/llama.cpp/cpu] [--backend libggml-cpu-haswell.so] [--out tests/data/arch]

What it does:
  1. writes the F32 models with gguf-py's GGUFWriter (weights normal(0, 0.05), norm gains
     normal(1, 0.2), one numpy default_rng seed per model);
  2. compiles scripts/arch_oracle.cpp against the prebuilt libllama and quantizes F32 files with
     llama_model_quantize (llama-quantize's default mixture for Q8_0 / Q4_0);
  3. runs llama.cpp (the CPU backend variant --backend, loaded explicitly; 1 thread; F32 K/V cache;
     no flash attention; swa_full false; prompt [1, 400, 200, 300] as one batch, then 24 greedy
     tokens, one per decode); every F32 run is repeated with the baseline x64 variant as a
     cross-check, phi3-f32 also with unpadded context sizes (200, 255, 257, 300), and gemma3's F32
     files once more with arch_oracle's tensor dump (ARCH_ORACLE_DUMP) to check ggml's GELU table;
  4. reads each file back with gguf-py (dequantizing quantized tensors with gguf.quants.dequantize)
     and runs the float64 reference, teacher-forced along llama.cpp's greedy path, plus the
     "sensitivity" variants (one feature switched off or done wrong);
  5. writes the JSON files and prints a summary (agreement, sensitivities, llama.cpp's hparams, and
     every WARN/ERROR-level line llama.cpp logged).
--seed-search N only prints how the seeds were chosen (see SEED_SEARCH_BASE).
"""
import argparse
import copy
import json
import lzma
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

LLAMA_COMMIT = "de3ff815ea7d559ee917f063901b8986f038abc6"
PROMPT = [1, 400, 200, 300]
N_NEW = 24
VOCAB = 512

# --------------------------------------------------------------------------------------------------
# the models

QWEN3 = dict(
    stem="qwen3", arch="qwen3", seed=20261003, name="arch-qwen3",
    n_embd=64, n_ff=128, n_layer=3, n_head=4, n_head_kv=2, head_dim=32, n_rot=32, n_ctx_train=256,
    freq_base=1e6, eps=1e-6, tied=False, qk_norm=True, post_norms=False, fused=False,
    act="silu", emb_scale=False, attn_scale=1.0 / math.sqrt(32),
)

GEMMA3 = dict(
    stem="gemma3", arch="gemma3", seed=20262000, name="arch-gemma3",
    n_embd=64, n_ff=128, n_layer=4, n_head=4, n_head_kv=2, head_dim=32, n_rot=32, n_ctx_train=256,
    freq_base=1e6, freq_base_swa=1e4, rope_linear_factor=8.0, n_swa=8, swa_pattern=2,
    eps=1e-6, tied=True, qk_norm=True, post_norms=True, fused=False,
    act="gelu_tanh", emb_scale=True, attn_scale=1.0 / math.sqrt(32),
)

PHI3 = dict(
    stem="phi3", arch="phi3", seed=20263003, name="arch-phi4-mini-like",
    n_embd=128, n_ff=128, n_layer=3, n_head=4, n_head_kv=2, head_dim=32, n_rot=24, n_ctx_train=1024,
    n_ctx_orig=256, freq_base=1e4, eps=1e-5, tied=True, qk_norm=False, post_norms=False, fused=True,
    act="silu", emb_scale=False, attn_scale=1.0 / math.sqrt(32), phi_swa=0,
    rope_factors_long=np.linspace(1.0, 8.0, 12, dtype=np.float32),
    rope_factors_short=np.linspace(1.0, 1.5, 12, dtype=np.float32),
)
# Phi3 converter: attn_factor = sqrt(1 + ln(scale) / ln(original)), scale = context_length / original
PHI3["attn_factor"] = math.sqrt(1.0 + math.log(PHI3["n_ctx_train"] / PHI3["n_ctx_orig"]) / math.log(PHI3["n_ctx_orig"]))

# general.name must not contain "phi3" or "phi-3": llama.cpp's vocabulary loader then sets attributes of
# "<|endoftext|>", which tok512 lacks (std::out_of_range, the model fails to load).

# Seeds: each model's is the first of base, base+1, ... for which every run (the F32 runs, and the
# quantized copies as gguf-py quantizes them) has a smallest top-2 gap of at least 0.01 along the
# reference's own greedy path (--seed-search N prints these gaps), so that no greedy id is decided
# by a near-tie.
SEED_SEARCH_BASE = {"qwen3": 20261000, "gemma3": 20262000, "phi3": 20263000}


def draw_weights(m):
    """numpy arrays (rows, cols) in file order; values drawn in that order from default_rng(seed)."""
    rng = np.random.default_rng(m["seed"])
    E, F, hd = m["n_embd"], m["n_ff"], m["head_dim"]
    nq, nkv = m["n_head"] * hd, m["n_head_kv"] * hd

    def mat(rows, cols):
        return rng.normal(0.0, 0.05, size=(rows, cols)).astype(np.float32)

    def gain(n):
        return rng.normal(1.0, 0.2, size=(n,)).astype(np.float32)

    t = {}
    if "rope_factors_long" in m:
        t["rope_factors_long.weight"] = m["rope_factors_long"]
        t["rope_factors_short.weight"] = m["rope_factors_short"]
    t["token_embd.weight"] = mat(VOCAB, E)
    for i in range(m["n_layer"]):
        p = f"blk.{i}."
        t[p + "attn_norm.weight"] = gain(E)
        if m["fused"]:
            t[p + "attn_qkv.weight"] = mat(nq + 2 * nkv, E)
        else:
            t[p + "attn_q.weight"] = mat(nq, E)
            t[p + "attn_k.weight"] = mat(nkv, E)
            t[p + "attn_v.weight"] = mat(nkv, E)
        t[p + "attn_output.weight"] = mat(E, nq)
        if m["qk_norm"]:
            t[p + "attn_q_norm.weight"] = gain(hd)
            t[p + "attn_k_norm.weight"] = gain(hd)
        if m["post_norms"]:
            t[p + "post_attention_norm.weight"] = gain(E)
        t[p + "ffn_norm.weight"] = gain(E)
        if m["fused"]:
            t[p + "ffn_up.weight"] = mat(2 * F, E)  # rows [0, F): gate, [F, 2F): up
        else:
            t[p + "ffn_gate.weight"] = mat(F, E)
            t[p + "ffn_up.weight"] = mat(F, E)
        t[p + "ffn_down.weight"] = mat(E, F)
        if m["post_norms"]:
            t[p + "post_ffw_norm.weight"] = gain(E)
    t["output_norm.weight"] = gain(E)
    if not m["tied"]:
        t["output.weight"] = mat(VOCAB, E)
    return t


def write_model(gguf, path, m, tensors, vocab_fields, with_window=True):
    a = m["arch"]
    w = gguf.GGUFWriter(str(path), a)
    w.add_name(m["name"])
    w.add_context_length(m["n_ctx_train"])
    w.add_embedding_length(m["n_embd"])
    w.add_feed_forward_length(m["n_ff"])
    w.add_block_count(m["n_layer"])
    w.add_head_count(m["n_head"])
    w.add_head_count_kv(m["n_head_kv"])
    if a in ("qwen3", "gemma3"):
        w.add_key_length(m["head_dim"])
        w.add_value_length(m["head_dim"])
    w.add_rope_freq_base(m["freq_base"])
    if a == "gemma3":
        w.add_rope_freq_base_swa(m["freq_base_swa"])
        w.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
        w.add_rope_scaling_factor(m["rope_linear_factor"])
        if with_window:
            w.add_sliding_window(m["n_swa"])
        w.add_sliding_window_pattern(m["swa_pattern"])  # an int: written as UINT32
    if a == "phi3":
        w.add_rope_scaling_orig_ctx_len(m["n_ctx_orig"])
        w.add_sliding_window(m["phi_swa"])
        if "attn_factor" in m:
            w.add_rope_scaling_attn_factors(m["attn_factor"])
    w.add_layer_norm_rms_eps(m["eps"])
    w.add_vocab_size(VOCAB)
    w.add_rope_dimension_count(m["n_rot"])
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    w.add_tokenizer_model(vocab_fields["tokenizer.ggml.model"])
    w.add_token_list(vocab_fields["tokenizer.ggml.tokens"])
    w.add_token_scores(vocab_fields["tokenizer.ggml.scores"])
    w.add_token_types(vocab_fields["tokenizer.ggml.token_type"])
    w.add_bos_token_id(vocab_fields["tokenizer.ggml.bos_token_id"])
    w.add_eos_token_id(vocab_fields["tokenizer.ggml.eos_token_id"])
    w.add_unk_token_id(vocab_fields["tokenizer.ggml.unknown_token_id"])
    w.add_add_bos_token(vocab_fields["tokenizer.ggml.add_bos_token"])
    w.add_add_eos_token(vocab_fields["tokenizer.ggml.add_eos_token"])
    for name, arr in tensors.items():
        w.add_tensor(name, arr)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def read_vocab(gguf, path):
    r = gguf.GGUFReader(str(path))
    out = {}
    for k, f in r.fields.items():
        if not k.startswith("tokenizer.ggml."):
            continue
        if k == "tokenizer.ggml.tokens":
            out[k] = [bytes(f.parts[i]) for i in f.data]  # raw bytes, as stored
        elif k == "tokenizer.ggml.model":
            out[k] = f.contents()
        elif k in ("tokenizer.ggml.scores", "tokenizer.ggml.token_type"):
            out[k] = list(f.contents())
        else:
            out[k] = f.contents()
    assert len(out["tokenizer.ggml.tokens"]) == VOCAB, "expected the 512-piece tok512 vocabulary"
    assert out["tokenizer.ggml.model"] == "llama"
    return out


def read_weights(gguf, path):
    """name -> float64 array (rows, cols), dequantized by gguf-py; and name -> ggml type name."""
    r = gguf.GGUFReader(str(path))
    W, types = {}, {}
    for t in r.tensors:
        shape = tuple(int(x) for x in reversed(t.shape))  # numpy order
        a = gguf.quants.dequantize(t.data, t.tensor_type)
        W[t.name] = np.asarray(a, dtype=np.float64).reshape(shape)
        types[t.name] = t.tensor_type.name
    return W, types


# --------------------------------------------------------------------------------------------------
# float64 reference

SQRT_2_OVER_PI = 0.79788456080286535587989211986876


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x ** 3)))


def _ggml_gelu_table():
    """ggml-cpu's ggml_table_gelu_f16: fp16(ggml_gelu_f32(x)) for every fp16 x, in float32 math."""
    h = np.arange(65536, dtype=np.uint16).view(np.float16).astype(np.float32)
    with np.errstate(all="ignore"):
        g = np.float32(0.5) * h * (np.float32(1.0) + np.tanh(
            np.float32(SQRT_2_OVER_PI) * h * (np.float32(1.0) + np.float32(0.044715) * h * h)))
    return g.astype(np.float32).astype(np.float16).astype(np.float64)


GELU_TABLE = None


def gelu_fp16_table(x):
    """What ggml_vec_geglu_f32 does with GGML_GELU_FP16: x to fp16, table lookup; |x| >= 10 exact."""
    global GELU_TABLE
    if GELU_TABLE is None:
        GELU_TABLE = _ggml_gelu_table()
    xf = x.astype(np.float32)
    idx = xf.astype(np.float16).view(np.uint16)
    y = GELU_TABLE[idx]
    y = np.where(xf >= 10.0, xf.astype(np.float64), y)
    return np.where(xf <= -10.0, 0.0, y)


def silu(x):
    return x / (1.0 + np.exp(-x))


def rmsnorm(x, w, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def rope(x, pos, n_rot, base, fscale, factors, mscale, mode, freq_dim=None, mscale_pass=1.0):
    """x (T, H, D). NeoX: element j pairs with j + n_rot/2 (j < n_rot/2); normal: 2j with 2j+1.
    Angle of pair j: pos * fscale * base^(-2j/n_rot) / factors[j]; cos and sin times mscale;
    elements n_rot.. pass through unchanged. (freq_dim and mscale_pass only for the wrong variants.)"""
    half = n_rot // 2
    j = np.arange(half, dtype=np.float64)
    inv = base ** (-2.0 * j / (freq_dim or n_rot))
    if factors is not None:
        inv = inv / np.asarray(factors[:half], dtype=np.float64)
    ang = pos[:, None].astype(np.float64) * fscale * inv[None, :]
    c = (np.cos(ang) * mscale)[:, None, :]
    s = (np.sin(ang) * mscale)[:, None, :]
    out = x.copy()
    out[..., n_rot:] *= mscale_pass
    if mode == "neox":
        a, b = x[..., :half], x[..., half:n_rot]
        out[..., :half] = a * c - b * s
        out[..., half:n_rot] = a * s + b * c
    else:
        a, b = x[..., 0:n_rot:2], x[..., 1:n_rot:2]
        out[..., 0:n_rot:2] = a * c - b * s
        out[..., 1:n_rot:2] = a * s + b * c
    return out


def semantics(m, run):
    """What llama.cpp does with this file and context (see the README): a dict the reference reads."""
    L = m["n_layer"]
    s = dict(
        n_embd=m["n_embd"], n_ff=m["n_ff"], n_layer=L, n_head=m["n_head"], n_head_kv=m["n_head_kv"],
        hd=m["head_dim"], n_rot=m["n_rot"], eps=m["eps"], rope_mode="neox",
        emb_scale=math.sqrt(m["n_embd"]) if m["emb_scale"] else 1.0,
        q_norm=m["qk_norm"], k_norm=m["qk_norm"], post_attn_norm=m["post_norms"], post_ffw_norm=m["post_norms"],
        act=m["act"], attn_scale=m["attn_scale"], fused=m["fused"], gate_up_swapped=False,
        factors=None, mscale=1.0, window=None,
        layers=[dict(swa=False, base=m["freq_base"], fscale=1.0) for _ in range(L)],
    )
    if m["arch"] == "gemma3":
        gscale = 1.0 / m["rope_linear_factor"]
        for il, ly in enumerate(s["layers"]):
            ly["fscale"] = gscale
            if run.get("window", True):
                # llama_hparams::set_swa_pattern(n_pattern, dense_first=false): il % n < n - 1 is SWA
                if il % m["swa_pattern"] < m["swa_pattern"] - 1:
                    ly.update(swa=True, base=m["freq_base_swa"], fscale=1.0)
        if run.get("window", True):
            s["window"] = m["n_swa"]
    if m["arch"] == "phi3":
        if "rope_factors_long" in m:
            # llama_model::get_rope_factors: n_ctx_seq > n_ctx_orig_yarn -> long factors
            s["factors"] = m["rope_factors_long"] if run["n_ctx_seq"] > m["n_ctx_orig"] else m["rope_factors_short"]
            s["factors_name"] = "long" if run["n_ctx_seq"] > m["n_ctx_orig"] else "short"
        s["mscale"] = m.get("attn_factor", 1.0)
    return s


def reference(W, s, tokens):
    """float64 forward pass over the whole sequence (causal; equivalent to a KV cache). -> (T, vocab)"""
    T = len(tokens)
    pos = np.arange(T)
    H, HKV, hd, F = s["n_head"], s["n_head_kv"], s["hd"], s["n_ff"]
    nq, nkv = H * hd, HKV * hd
    x = W["token_embd.weight"][tokens] * s["emb_scale"]
    causal = pos[None, :] <= pos[:, None]  # [query, key]
    for il in range(s["n_layer"]):
        p = f"blk.{il}."
        ly = s["layers"][il]
        h = rmsnorm(x, W[p + "attn_norm.weight"], s["eps"])
        if s["fused"]:
            qkv = h @ W[p + "attn_qkv.weight"].T
            q, k, v = qkv[:, :nq], qkv[:, nq:nq + nkv], qkv[:, nq + nkv:]
        else:
            q, k, v = h @ W[p + "attn_q.weight"].T, h @ W[p + "attn_k.weight"].T, h @ W[p + "attn_v.weight"].T
        q, k, v = q.reshape(T, H, hd), k.reshape(T, HKV, hd), v.reshape(T, HKV, hd)
        if s["q_norm"]:
            q = rmsnorm(q, W[p + "attn_q_norm.weight"], s["eps"])
        if s["k_norm"]:
            k = rmsnorm(k, W[p + "attn_k_norm.weight"], s["eps"])
        rope_args = (pos, s["n_rot"], ly["base"], ly["fscale"], s["factors"], s["mscale"], s["rope_mode"],
                     s.get("rope_freq_dim"), s["mscale"] if s.get("mscale_on_pass_through") else 1.0)
        q, k = rope(q, *rope_args), rope(k, *rope_args)
        allowed = causal.copy()
        if ly["swa"] and s["window"] is not None:
            # llama_hparams::is_masked_swa, STANDARD: key p0 masked for query p1 when p1 - p0 >= n_swa
            allowed &= (pos[:, None] - pos[None, :]) < s["window"]
        out = np.empty((T, H, hd))
        g = H // HKV
        for hh in range(H):
            sc = (q[:, hh, :] @ k[:, hh // g, :].T) * s["attn_scale"]
            sc = np.where(allowed, sc, -np.inf)
            sc = sc - sc.max(axis=1, keepdims=True)
            pr = np.exp(sc)
            pr /= pr.sum(axis=1, keepdims=True)
            out[:, hh, :] = pr @ v[:, hh // g, :]
        o = out.reshape(T, nq) @ W[p + "attn_output.weight"].T
        if s["post_attn_norm"]:
            o = rmsnorm(o, W[p + "post_attention_norm.weight"], s["eps"])
        x = x + o
        h = rmsnorm(x, W[p + "ffn_norm.weight"], s["eps"])
        if s["fused"]:
            u = h @ W[p + "ffn_up.weight"].T
            gate, up = u[:, :F], u[:, F:]
        else:
            gate, up = h @ W[p + "ffn_gate.weight"].T, h @ W[p + "ffn_up.weight"].T
        if s.get("capture") is not None:
            s["capture"].append(gate)
        if s["gate_up_swapped"]:
            gate, up = up, gate
        act = {"silu": silu, "gelu_tanh": gelu_tanh, "gelu_fp16_table": gelu_fp16_table}[s["act"]]
        if s.get("gate_float32"):
            # the gate as a float32 computation gives it (float32 products, numpy's pairwise float32 sum):
            # near an fp16 rounding boundary of the GELU table, a last-bit difference picks the other entry
            wg = W[p + "ffn_up.weight"][:F] if s["fused"] else W[p + "ffn_gate.weight"]
            h32, w32 = h.astype(np.float32), wg.astype(np.float32)
            gate = (h32[:, None, :] * w32[None, :, :]).sum(axis=-1, dtype=np.float32).astype(np.float64)
        y = (act(gate) * up) @ W[p + "ffn_down.weight"].T
        if s["post_ffw_norm"]:
            y = rmsnorm(y, W[p + "post_ffw_norm.weight"], s["eps"])
        x = x + y
    x = rmsnorm(x, W["output_norm.weight"], s["eps"])
    out_w = W["output.weight"] if "output.weight" in W else W["token_embd.weight"]
    return x @ out_w.T


def variants(m, s, run):
    """feature name -> semantics with that feature switched off or done wrong."""
    def v(fn):
        t = copy.deepcopy(s)
        fn(t)
        return t

    out = {}
    if m["arch"] == "qwen3":
        out["q_norm"] = v(lambda t: t.update(q_norm=False))
        out["k_norm"] = v(lambda t: t.update(k_norm=False))
        out["normal_rope_instead_of_neox"] = v(lambda t: t.update(rope_mode="norm"))
    elif m["arch"] == "gemma3":
        windowed = s["window"] is not None
        out["embedding_scale"] = v(lambda t: t.update(emb_scale=1.0))
        out["post_attention_norm"] = v(lambda t: t.update(post_attn_norm=False))
        out["post_ffw_norm"] = v(lambda t: t.update(post_ffw_norm=False))
        out["q_norm"] = v(lambda t: t.update(q_norm=False))
        out["k_norm"] = v(lambda t: t.update(k_norm=False))
        out["silu_instead_of_gelu"] = v(lambda t: t.update(act="silu"))
        if windowed:
            out["window"] = v(lambda t: t.update(window=None))
            out["swa_rope_base"] = v(lambda t: [ly.update(base=m["freq_base"]) for ly in t["layers"] if ly["swa"]])
            out["scaling_on_local_layers_too"] = v(
                lambda t: [ly.update(fscale=1.0 / m["rope_linear_factor"]) for ly in t["layers"] if ly["swa"]])
        out["global_linear_scaling"] = v(lambda t: [ly.update(fscale=1.0) for ly in t["layers"] if not ly["swa"]])
        out["attention_scale_dim_over_heads"] = v(
            lambda t: t.update(attn_scale=1.0 / math.sqrt(m["n_embd"] / m["n_head"])))
        if not windowed:
            # the file's pattern applied anyway (as if sliding_window were still there)
            out["window_applied_anyway"] = semantics(m, dict(run, window=True))
    elif m["arch"] == "phi3":
        if m["n_rot"] < m["head_dim"]:
            def whole_head(t):
                t["n_rot"] = m["head_dim"]
                if t["factors"] is not None:  # the 12 factors, then 1.0 for the extra pairs
                    t["factors"] = np.concatenate([t["factors"], np.ones(m["head_dim"] // 2 - len(t["factors"]))])
            out["partial_rotary"] = v(whole_head)
            out["rope_freq_from_head_size"] = v(lambda t: t.update(rope_freq_dim=m["head_dim"]))
        if "rope_factors_long" in m:
            other = m["rope_factors_short"] if s["factors_name"] == "long" else m["rope_factors_long"]
            out["long_vs_short_factors"] = v(lambda t: t.update(factors=other))
            out["attn_factor"] = v(lambda t: t.update(mscale=1.0))
            out["attn_factor_on_pass_through_dims_too"] = v(lambda t: t.update(mscale_on_pass_through=True))
        else:
            out["normal_rope_instead_of_neox"] = v(lambda t: t.update(rope_mode="norm"))
        out["gate_up_swapped"] = v(lambda t: t.update(gate_up_swapped=True))
    return out


def reference_greedy(W, s):
    """the reference's own free-running greedy path: (ids, top-2 gaps)."""
    tokens, ids, gaps = list(PROMPT), [], []
    for _ in range(N_NEW):
        row = reference(W, s, tokens)[-1]
        order = np.argsort(-row, kind="stable")
        ids.append(int(order[0]))
        gaps.append(float(row[order[0]] - row[order[1]]))
        tokens.append(ids[-1])
    return ids, gaps


def seed_report(gguf, m, seed):
    """min top-2 gap along the reference's own greedy path, for every F32 run of the family and for
    the quantized copies (weights quantized by gguf-py, which rounds as ggml's reference code does)."""
    mm = dict(m, seed=seed)
    t = draw_weights(mm)
    W = {k: v.astype(np.float64) for k, v in t.items()}
    out = {}
    runs = {"qwen3": [("f32", 256, True)], "gemma3": [("f32", 256, True), ("nowindow", 256, False)],
            "phi3": [("short", 256, True), ("long", 512, True)] if "rope_factors_long" in m else [("f32", 256, True)]}
    for label, n_ctx, window in runs[m["arch"]]:
        out[label] = min(reference_greedy(W, semantics(mm, dict(n_ctx_seq=n_ctx, window=window)))[1])
    quants = {"qwen3": ["Q8_0", "Q4_0"], "gemma3": ["Q8_0"], "phi3": ["Q8_0"] if "rope_factors_long" in m else []}
    for q in quants[m["arch"]]:
        qt = gguf.GGMLQuantizationType[q]
        Wq = {k: (gguf.quants.dequantize(gguf.quants.quantize(v, qt), qt).astype(np.float64) if v.ndim == 2 else
                  v.astype(np.float64)) for k, v in t.items()}
        n_ctx = 512 if m["arch"] == "phi3" else 256
        out[q] = min(reference_greedy(Wq, semantics(mm, dict(n_ctx_seq=n_ctx, window=True)))[1])
    return out


# --------------------------------------------------------------------------------------------------
# llama.cpp

def build_oracle(root, llama_src, llama_lib, work):
    exe = work / "arch_oracle"
    subprocess.run(["g++", "-std=c++17", "-O1", "-I", f"{llama_src}/include", "-I", f"{llama_src}/ggml/include",
                    str(root / "scripts" / "arch_oracle.cpp"), "-o", str(exe),
                    f"{llama_lib}/libllama.v0.5.0.so", f"{llama_lib}/libggml.v0.5.0.so", f"{llama_lib}/libggml-base.so",
                    f"-Wl,-rpath,{llama_lib}"], check=True)
    return exe


def quantize(exe, backend, src, dst, qtype, log_path):
    with open(log_path, "w") as log:
        subprocess.run([str(exe), "quantize", backend, str(src), str(dst), qtype], check=True, stderr=log,
                       stdout=log)


def run_llama(exe, backend, model, n_ctx, log_path, dump=None):
    env = dict(os.environ)
    env.pop("ARCH_ORACLE_DUMP", None)
    if dump:
        env["ARCH_ORACLE_DUMP"] = str(dump)
    with open(log_path, "w") as log:
        p = subprocess.run([str(exe), "run", backend, str(model), str(n_ctx), str(N_NEW), ",".join(map(str, PROMPT))],
                           check=True, stdout=subprocess.PIPE, stderr=log, env=env)
    return json.loads(p.stdout)


def read_dump(path):
    b, off, out = Path(path).read_bytes(), 0, {}
    while off < len(b):
        name = b[off:off + 64].split(b"\0")[0].decode()
        ne0, ne1 = (int(x) for x in np.frombuffer(b[off + 64:off + 80], dtype=np.int64))
        off += 80
        out[name] = np.frombuffer(b[off:off + 4 * ne0 * ne1], dtype=np.float32).reshape(ne1, ne0)
        off += 4 * ne0 * ne1
    return out


def check_gelu_table(exe, backend, path, n_ctx, work, W, s, L):
    """llama.cpp's own ffn_gate / ffn_up / ffn_geglu tensors of the prompt's decode: is ffn_geglu
    exactly table(gate) * up in float32, and how many gate values fall in another fp16 table entry
    than the float64 reference's gate values do."""
    dump = work / "gelu.dump"
    rd = run_llama(exe, backend, path, n_ctx, work / "gelu.dump.log", dump=dump)
    assert np.array_equal(np.array(rd["step_logits"], dtype=np.float64), L), "cb_eval changed the logits"
    T = read_dump(dump)
    cap = []
    reference(W, dict(s, act="gelu_fp16_table", capture=cap), PROMPT)
    n_exact = n_total = 0
    other_entry, gate_diff = [], []
    for il in range(s["n_layer"]):
        g, u, y = T[f"ffn_gate-{il}"], T[f"ffn_up-{il}"], T[f"ffn_geglu-{il}"]
        tab = gelu_fp16_table(g.astype(np.float64)).astype(np.float32)
        pred = (tab * u).astype(np.float32)
        n_exact += int(np.sum(pred.view(np.uint32) == y.view(np.uint32)))
        n_total += y.size
        rg = cap[il][-g.shape[0]:]  # the last layer keeps the last position only
        other_entry.append(f"{int(np.sum(g.astype(np.float16).view(np.uint16) != rg.astype(np.float32).astype(np.float16).view(np.uint16)))} of {g.size}")
        gate_diff.append(float(np.abs(g.astype(np.float64) - rg).max()))
    return {
        "what": "llama.cpp's own ffn_gate, ffn_up and ffn_geglu tensors of the prompt's decode (cb_eval); per layer, "
                "compared with the fp16-table reference's gate on the same positions",
        "ffn_geglu_equal_to_table_gate_times_up_bitwise": f"{n_exact} of {n_total}",
        "gate_max_abs_diff_per_layer": gate_diff,
        "gate_values_in_another_fp16_entry_per_layer": other_entry,
    }


HPARAM_KEYS = ("arch", "n_ctx_train", "n_embd", "n_layer", "n_head", "n_head_kv", "n_rot", "n_swa", "is_swa_any",
               "n_embd_head_k", "n_embd_head_v", "n_gqa", "f_norm_rms_eps", "f_attn_scale", "n_ff", "rope type",
               "rope scaling", "freq_base_train", "freq_scale_train", "freq_base_swa", "freq_scale_swa",
               "n_rot_swa", "n_ctx_orig_yarn", "file type")
CTX_KEYS = ("n_ctx", "n_ctx_seq", "n_batch", "n_ubatch", "flash_attn", "freq_base", "freq_scale")


def llama_log_lines(log_text):
    """llama.cpp's own lines for the hparams, the context, which layers are SWA, and any warning."""
    keep, warnings = [], []
    for line in log_text.splitlines():
        m = re.match(r"print_info: (.+?)\s+= (.*)$", line)
        if m and m.group(1).strip() in HPARAM_KEYS:
            keep.append(line.strip())
            continue
        m = re.match(r"llama_context: (\S+)\s+= (.*)$", line)
        if m and m.group(1) in CTX_KEYS:
            keep.append(line.strip())
            continue
        if re.match(r"load_tensors: layer +\d+ assigned to device CPU, is_swa = \d", line) or "Phi SWA" in line:
            keep.append(line.strip())
        # "[warning] " / "[error] ": arch_oracle's mark for llama.cpp's WARN and ERROR log levels
        if re.search(r"warn|missing|error|fail", line, re.I):
            warnings.append(line.strip())
    return keep, warnings


# --------------------------------------------------------------------------------------------------
# JSON

class F32List(list):
    """printed as the shortest decimal of each float32 value."""


def f32(a):
    return F32List(np.asarray(a, dtype=np.float32).tolist())


def _fmt_scalar(v):
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, np.float32):
        return repr(v)  # shortest decimal that reads back as the same float32
    if isinstance(v, float):
        return repr(v)
    return json.dumps(v)


def inline(obj):
    if isinstance(obj, F32List):
        return "[" + ", ".join(repr(np.float32(x)) for x in obj) + "]"
    if isinstance(obj, list):
        return "[" + ", ".join(inline(x) for x in obj) + "]"
    return _fmt_scalar(obj)


def dumps(obj, indent=0):
    """JSON; dicts one key a line, a list of lists one inner list a line, other lists on one line."""
    pad = "  " * indent
    if isinstance(obj, dict):
        items = [f"{pad}  {json.dumps(k)}: {dumps(v, indent + 1)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(obj, list) and obj and all(isinstance(x, list) for x in obj):
        return "[\n" + ",\n".join(pad + "  " + inline(x) for x in obj) + "\n" + pad + "]"
    if isinstance(obj, list) and any(isinstance(x, str) for x in obj):
        return "[\n" + ",\n".join(pad + "  " + json.dumps(x) for x in obj) + "\n" + pad + "]"
    return inline(obj)


def top_stats(logits):
    """per step: top-2 gap and top-5 [id, logit] (ties -> lowest id)."""
    gaps, top5 = [], []
    for row in logits:
        order = sorted(range(len(row)), key=lambda i: (-row[i], i))
        gaps.append(float(row[order[0]] - row[order[1]]))
        top5.append([[int(i), np.float32(row[i])] for i in order[:5]])
    return gaps, top5


# --------------------------------------------------------------------------------------------------

def main():
    root = Path(__file__).resolve().parent.parent
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--llama-src", default="/tmp/llama-src")
    ap.add_argument("--llama-lib", default="/tmp/llama.cpp/cpu")
    ap.add_argument("--backend", default="libggml-cpu-haswell.so",
                    help="ggml CPU variant used for the oracle (this machine's best: AVX2+FMA+F16C)")
    ap.add_argument("--cross-backend", default="libggml-cpu-x64.so", help="baseline variant for the cross-check")
    ap.add_argument("--vocab-from", default=str(root.parent / "shared/testdata/ggml/quant/oracle-a-f32.gguf"))
    ap.add_argument("--out", default=str(root / "tests/data/arch"))
    ap.add_argument("--keep-logs", default=None, help="folder for llama.cpp's full logs")
    ap.add_argument("--seed-search", type=int, default=0, metavar="N",
                    help="only print, for seeds base .. base+N-1 of each model, the smallest top-2 gaps "
                         "along the reference's own greedy paths (how the seeds were chosen)")
    args = ap.parse_args()

    sys.path.insert(0, f"{args.llama_src}/gguf-py")
    import gguf  # noqa: E402

    if args.seed_search:
        for m in (QWEN3, GEMMA3, PHI3):
            base = SEED_SEARCH_BASE[m["stem"]]
            for seed in range(base, base + args.seed_search):
                r = seed_report(gguf, m, seed)
                print(m["stem"], seed, " ".join(f"{k} {v:.4f}" for k, v in r.items()), flush=True)
        return

    head = subprocess.run(["git", "-C", args.llama_src, "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode == 0 and head.stdout.strip() != LLAMA_COMMIT:
        sys.exit(f"llama.cpp source is at {head.stdout.strip()}, expected {LLAMA_COMMIT}")

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="arch_fixtures_"))
    logs = Path(args.keep_logs) if args.keep_logs else work / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    backend = f"{args.llama_lib}/{args.backend}"
    cross = f"{args.llama_lib}/{args.cross_backend}"

    vocab = read_vocab(gguf, args.vocab_from)

    # 1. F32 models
    files = {}
    for m in (QWEN3, GEMMA3, PHI3):
        t = draw_weights(m)
        files[m["stem"] + "-f32"] = (m, out / f"{m['stem']}-f32.gguf")
        write_model(gguf, out / f"{m['stem']}-f32.gguf", m, t, vocab)
        if m is GEMMA3:  # run by llama.cpp, not kept: the tests switch gemma3-f32's window off instead
            files["gemma3-nowindow-f32"] = (m, work / "gemma3-nowindow-f32.gguf")
            write_model(gguf, work / "gemma3-nowindow-f32.gguf", m, t, vocab, with_window=False)

    # 2. oracle program and quantized copies
    exe = build_oracle(root, args.llama_src, args.llama_lib, work)
    for stem, src, qtype in (("qwen3-q8_0", "qwen3-f32", "q8_0"), ("qwen3-q4_0", "qwen3-f32", "q4_0"),
                             ("gemma3-q8_0", "gemma3-f32", "q8_0"), ("phi3-q8_0", "phi3-f32", "q8_0")):
        m, srcpath = files[src]
        quantize(exe, backend, srcpath, out / f"{stem}.gguf", qtype, logs / f"{stem}.quantize.log")
        for line in (logs / f"{stem}.quantize.log").read_text().splitlines():
            if re.search(r"warn|missing|error|fail", line, re.I):
                print(f"{stem} quantize: {line.strip()}")
        files[stem] = (m, out / f"{stem}.gguf")

    # 3.-5. runs: (json name, file stem, n_ctx, run label, window present)
    runs = [
        ("qwen3-f32", "qwen3-f32", 256, None, True),
        ("qwen3-q8_0", "qwen3-q8_0", 256, None, True),
        ("qwen3-q4_0", "qwen3-q4_0", 256, None, True),
        ("gemma3-f32", "gemma3-f32", 256, None, True),
        ("gemma3-nowindow-f32", "gemma3-nowindow-f32", 256, None, False),
        ("gemma3-q8_0", "gemma3-q8_0", 256, None, True),
        ("phi3-f32.short", "phi3-f32", 256, "short", True),
        ("phi3-f32.long", "phi3-f32", 512, "long", True),
        ("phi3-q8_0", "phi3-q8_0", 512, "long", True),
    ]
    summary = []
    for jname, stem, n_ctx, label, window in runs:
        m, path = files[stem]
        is_f32 = stem.endswith("-f32")
        res = run_llama(exe, backend, path, n_ctx, logs / f"{jname}.log")
        log_text = (logs / f"{jname}.log").read_text()
        kept, warnings = llama_log_lines(log_text)
        greedy = res["greedy"]
        L = np.array(res["step_logits"], dtype=np.float64)
        assert L.shape == (N_NEW, VOCAB) and res["prompt"] == PROMPT

        W, types = read_weights(gguf, path)
        run = dict(n_ctx_seq=res["n_ctx_seq"], window=window)
        s = semantics(m, run)
        tokens = PROMPT + greedy[:N_NEW - 1]
        R = reference(W, s, tokens)[len(PROMPT) - 1:]
        diff = float(np.abs(R - L).max())
        diff_first = float(np.abs(R[0] - L[0]).max())
        gaps, top5 = top_stats(L)
        rgaps, _ = top_stats(R)

        ref = {
            "what": "independent float64 numpy forward pass; weights read back from this file with gguf-py "
                    "(quantized tensors dequantized by gguf.quants.dequantize), no activation quantization, "
                    "float64 attention over the whole sequence; teacher-forced along llama.cpp's greedy path"
                    + ("; GELU(tanh) computed exactly" if m["act"] == "gelu_tanh" else ""),
            "first_logits": f32(R[0]),
            "step_logits": [f32(r) for r in R],
            "argmax_along_llamacpp_path": [int(np.argmax(r)) for r in R],
            "top2_gap_per_step": f32(rgaps),
            "max_abs_diff_first_logits_vs_llamacpp": diff_first,
            "max_abs_diff_vs_llamacpp": diff,
        }
        if m["act"] == "gelu_tanh":
            st = dict(s, act="gelu_fp16_table")
            RT = reference(W, st, tokens)[len(PROMPT) - 1:]
            RJ = reference(W, dict(st, gate_float32=True), tokens)[len(PROMPT) - 1:]
            table_check = check_gelu_table(exe, backend, path, n_ctx, work, W, s, L) if is_f32 else None
            ref["fp16_table_gelu"] = {
                "what": "the same reference with ggml-cpu's GELU: gate rounded to fp16, then ggml_table_gelu_f16 "
                        "(fp16 of ggml_gelu_f32 in float32); |x| >= 10 bypasses the table",
                "max_abs_diff_vs_llamacpp": float(np.abs(RT - L).max()),
                "max_abs_diff_vs_exact_gelu_reference": float(np.abs(RT - R).max()),
                "max_abs_change_if_gate_computed_in_float32": float(np.abs(RJ - RT).max()),
                "max_abs_diff_vs_llamacpp_if_gate_computed_in_float32": float(np.abs(RJ - L).max()),
            }
            if table_check:
                ref["fp16_table_gelu"]["llama_cpp_tensors"] = table_check
        sens = {}
        if is_f32:
            for name, sv in variants(m, s, run).items():
                sens[name] = float(np.abs(reference(W, sv, tokens)[len(PROMPT) - 1:] - R).max())

        cross_diff = None
        if is_f32:
            rc = run_llama(exe, cross, path, n_ctx, logs / f"{jname}.x64.log")
            cross_diff = float(np.abs(np.array(rc["step_logits"]) - L).max())
            assert rc["greedy"] == greedy

        type_counts = {}
        for tn in types.values():
            type_counts[tn] = type_counts.get(tn, 0) + 1

        doc = {
            "file": path.name,
            "llama_cpp_commit": LLAMA_COMMIT,
            "what": f"llama.cpp CPU ({args.backend}), 1 thread, n_ctx {n_ctx} requested, n_batch = n_ubatch = n_ctx, "
                    "K and V cache f32, flash attention off, swa_full false; prompt decoded as one batch, then one token per "
                    "decode; greedy = argmax of the last position's logits (ties -> lowest id)",
            "prompt": PROMPT,
            "n_new": N_NEW,
            "kv_cache_type": "f32",
            "n_ctx_requested": n_ctx,
            "n_ctx": res["n_ctx"],
            "n_ctx_seq": res["n_ctx_seq"],
        }
        if m["arch"] == "phi3":
            doc["n_ctx_orig_yarn"] = m["n_ctx_orig"]
            doc["rope_factors"] = s.get("factors_name", "none (no factor tensors)")
        doc["tensor_types"] = type_counts
        doc["greedy"] = greedy
        doc["top2_gap_per_step"] = f32(gaps)
        doc["top5_per_step"] = top5
        doc["first_logits"] = f32(L[0])
        if is_f32:  # quantized files: llama.cpp's own logits move by ~0.03 (activations quantized to Q8_0)
            doc["step_logits"] = [f32(r) for r in L]
        doc["reference_f64"] = ref
        if sens:
            doc["sensitivity"] = {
                "what": "max |logit change| over the 24 steps of the reference (teacher-forced on the same "
                        "path) with that feature switched off or done wrong; see README",
                **sens,
            }
        if cross_diff is not None:
            doc["cross_check_x64_backend_max_abs_diff"] = cross_diff
        if stem == "phi3-f32":
            # llama.cpp pads n_ctx up to a multiple of 256 (llama_context: GGML_PAD(n_ctx, 256)), and the
            # factors follow the padded n_ctx_seq: requesting 200 or 300 behaves as 256 or 512
            probe = {}
            for req in ((200, 255) if label == "short" else (257, 300)):
                rp = run_llama(exe, backend, path, req, logs / f"{jname}.pad{req}.log")
                probe[str(req)] = {"n_ctx": rp["n_ctx"], "n_ctx_seq": rp["n_ctx_seq"],
                                   "step_logits_identical_to_this_run": bool(np.array_equal(
                                       np.array(rp["step_logits"], dtype=np.float64), L))}
            doc["n_ctx_padding_probe"] = probe
        doc["llama_cpp_log"] = kept
        # xz: the floats' text shrinks to a quarter (the tests read it in memory)
        (out / f"{jname}.logits.json.xz").write_bytes(
            lzma.compress((dumps(doc) + "\n").encode(), preset=9 | lzma.PRESET_EXTREME))
        summary.append((jname, res, diff, diff_first, ref.get("fp16_table_gelu"), sens, cross_diff, warnings,
                        kept, type_counts, min(gaps), min(rgaps)))

    # summary
    for (jname, res, diff, diff_first, tab, sens, cross_diff, warnings, kept, tc, mg, mrg) in summary:
        print(f"== {jname}: n_ctx {res['n_ctx']} (seq {res['n_ctx_seq']}), greedy {res['greedy']}")
        print(f"   types {tc}; ref vs llama.cpp max {diff:.3g} (first {diff_first:.3g}); "
              f"min top2 gap llama {mg:.4g} ref {mrg:.4g}" + (f"; x64 cross {cross_diff:.3g}" if cross_diff is not None else ""))
        if tab:
            print(f"   fp16-table GELU reference vs llama.cpp {tab['max_abs_diff_vs_llamacpp']:.3g}, "
                  f"vs exact {tab['max_abs_diff_vs_exact_gelu_reference']:.3g}, "
                  f"gate in f32: change {tab['max_abs_change_if_gate_computed_in_float32']:.3g}, "
                  f"vs llama.cpp {tab['max_abs_diff_vs_llamacpp_if_gate_computed_in_float32']:.3g}; "
                  f"{tab.get('llama_cpp_tensors')}")
        if sens:
            print("   sensitivity: " + ", ".join(f"{k} {v:.3g}" for k, v in sens.items()))
        for w in warnings:
            print(f"   WARNING LINE: {w}")
    for jname in ("qwen3-f32", "gemma3-f32", "gemma3-nowindow-f32", "phi3-f32.short", "phi3-f32.long"):
        print(f"-- {jname}")
        for line in [s for s in summary if s[0] == jname][0][8]:
            print("   " + line)
    # every llama.cpp run and quantization of this script, including the cross-checks and probes
    for log in sorted(logs.glob("*.log")):
        for line in log.read_text().splitlines():
            if line.startswith(("[warning]", "[error]")) or re.search(r"missing|fail", line, re.I):
                print(f"{log.name}: {line.strip()}")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
