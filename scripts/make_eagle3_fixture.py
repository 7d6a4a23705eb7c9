#!/usr/bin/python3
"""Writes the EAGLE-3 reference fixture (tests/data/eagle3/), running SafeAILab's own draft-layer code.

Not part of the build: the files are committed. To regenerate them (Debian's python3-torch and
python3-numpy; no transformers needed):

    git clone https://github.com/SafeAILab/EAGLE /tmp/EAGLE   # made with cb7e0841fe0c (2026-02-19)
    /usr/bin/python3 scripts/make_eagle3_fixture.py --eagle-repo /tmp/EAGLE

What it does:
  1. Runs stories260K (../shared/models/stories260K.bin, llama2.c format) with a small torch forward
     of its own (llama2.c's model.py semantics) and checks it against `medusa generate --temp 0`'s
     greedy text. It records the residual stream entering the captured layers at every prompt
     position.
  2. Writes two EAGLE-3 checkpoints in the published layout (config.json, model.safetensors with
     SafeAILab's state-dict names) with deterministic random weights:
       default/       no layer list: SafeAILab's rule (modeling_llama_kv.py) captures the input of
                      every layer idx with idx == L-3 or idx == L//2 or idx == 2; on 5 layers that
                      is layer 2 alone, so the feature is H wide and cnets.Model.forward skips fc.
       layers-0-2-4/  "eagle_config": {"eagle_aux_hidden_state_layer_ids": [0, 2, 4]}: the inputs
                      of layers 0, 2, 4 concatenated in layer order (3H), and fc applies.
       layers-0-2-4-torch/  the same as pytorch_model.bin (torch.save), as older checkpoints ship.
  3. Loads each safetensors file back (own reader), loads it into SafeAILab's cnets.Model
     (load_state_dict(strict=False) as ea_model.py does; embed_tokens from the target) and runs
     their topK_genrate with top_k=1, depth=5 (= 6 drafted levels) on the prompt's features.
     Each level's log-probabilities are read with a forward hook on Model.logsoftmax. The chain is
     also recomputed by an independent implementation here, which must agree.

SafeAILab's code is imported from the given checkout, not copied: eagle/model/cnets.py and what it
imports (configs.py, utils_c.py, choices.py), with three shim modules standing in for the parts of
transformers / huggingface_hub that those files import (ACT2FN["silu"], a PretrainedConfig that
stores its keyword arguments, an hf_hub_download that is never called).
"""
import argparse
import hashlib
import importlib
import json
import math
import os
import struct
import subprocess
import sys
import tempfile
import types

import numpy as np
import torch

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
OUT = os.path.join(ROOT, "tests", "data", "eagle3")
MODEL = os.path.normpath(os.path.join(ROOT, "..", "shared", "models", "stories260K.bin"))
TOKENIZER_BIN = os.path.normpath(os.path.join(ROOT, "..", "shared", "models", "tok512.bin"))
TOKENIZER_MODEL = os.path.normpath(os.path.join(ROOT, "..", "shared", "models", "tok512.model"))

PROMPT = "Once upon a time"
PROMPT_IDS = [1, 403, 407, 261, 378]  # `medusa tokenize --bos` (generate prepends BOS = 1)
# `medusa generate -p "Once upon a time" -n 20 --temp 0 --trace`: the emitted tokens
GREEDY_20 = [432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426, 338, 401, 396, 267, 337, 410, 408, 419, 292]
GREEDY_TEXT = "Once upon a time, there was a little girl named Lily. She loved to play outsid"

DRAFT_VOCAB = 256
DEPTH = 6  # drafted levels: the prefill's top-1 plus topK_genrate's `depth` = 5 deeper ones
VOCAB_SEED = 7
VOCAB_TEXT_TOKENS = 64
# name, seed, explicit layer ids (None: SafeAILab's default rule). The seeds were picked from 1000..1999
# as the ones whose chain has 6 distinct draft ids with the widest top-1/top-2 log-prob gaps (random
# weights tend to settle on one token after a few levels, which would hide feeding the wrong token).
CHECKPOINTS = [
    ("default", 1684, None),
    ("layers-0-2-4", 1816, [0, 2, 4]),
]
MIN_GAP = 1e-3

# git blob ids of the SafeAILab files this was made with (commit cb7e0841fe0c206c6ed74a197ad5e2a1f13f5a2b)
KNOWN_BLOBS = {
    "cnets.py": "a8e13ca1688d72ef6e6c94386be2b435d3ecf740",
    "configs.py": "b355c2e7cbce1ad9e2ee146e3e3c349f52704e37",
    "utils_c.py": "c837aa639ee45fbc068ee93fcd8ba5ff729ac03f",
    "choices.py": "3dcef5853f539947d69330f10eee2f9c6a003174",
}


# ---------------------------------------------------------------------------------------------
# target: stories260K, llama2.c checkpoint, own forward


def load_llama2c(path):
    with open(path, "rb") as f:
        raw = f.read()
    dim, hidden, n_layers, n_heads, n_kv, vocab, seq_len = struct.unpack("<7i", raw[:28])
    shared = vocab > 0
    vocab = abs(vocab)
    hd = dim // n_heads
    data = np.frombuffer(raw, dtype="<f4", offset=28)
    pos = 0

    def take(*shape):
        nonlocal pos
        n = int(np.prod(shape))
        t = torch.from_numpy(data[pos:pos + n].copy()).reshape(shape)
        pos += n
        return t

    w = {"cfg": dict(dim=dim, hidden=hidden, n_layers=n_layers, n_heads=n_heads, n_kv=n_kv,
                     vocab=vocab, seq_len=seq_len)}
    w["emb"] = take(vocab, dim)
    w["rms_att"] = take(n_layers, dim)
    w["wq"] = take(n_layers, n_heads * hd, dim)
    w["wk"] = take(n_layers, n_kv * hd, dim)
    w["wv"] = take(n_layers, n_kv * hd, dim)
    w["wo"] = take(n_layers, dim, n_heads * hd)
    w["rms_ffn"] = take(n_layers, dim)
    w["w1"] = take(n_layers, hidden, dim)
    w["w2"] = take(n_layers, dim, hidden)
    w["w3"] = take(n_layers, hidden, dim)
    w["rms_final"] = take(dim)
    pos += seq_len * hd // 2 * 2  # freq_cis_real, freq_cis_imag
    w["wcls"] = w["emb"] if shared else take(vocab, dim)
    assert pos == data.size, (pos, data.size)
    return w


def rmsnorm(x, weight, eps=1e-5):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


def rope_pairs(x, positions, theta=10000.0):
    """llama2.c RoPE: adjacent pairs (2i, 2i+1) rotated as complex numbers. x [T, heads, hd]."""
    hd = x.shape[-1]
    freqs = 1.0 / (theta ** (torch.arange(0, hd, 2)[: hd // 2].float() / hd))
    ang = torch.outer(positions.float(), freqs)  # [T, hd/2]
    cis = torch.polar(torch.ones_like(ang), ang)[:, None, :]
    xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], hd // 2, 2))
    return torch.view_as_real(xc * cis).flatten(-2)


def target_forward(w, ids, capture):
    """Logits [T, vocab] and {layer: residual stream entering that layer [T, dim]}."""
    c = w["cfg"]
    T = len(ids)
    hd = c["dim"] // c["n_heads"]
    rep = c["n_heads"] // c["n_kv"]
    pos = torch.arange(T)
    mask = torch.full((T, T), float("-inf")).triu(1)
    x = w["emb"][torch.tensor(ids)]
    feats = {}
    for l in range(c["n_layers"]):
        if l in capture:
            feats[l] = x.clone()
        h = rmsnorm(x, w["rms_att"][l])
        q = (h @ w["wq"][l].T).view(T, c["n_heads"], hd)
        k = (h @ w["wk"][l].T).view(T, c["n_kv"], hd)
        v = (h @ w["wv"][l].T).view(T, c["n_kv"], hd)
        q, k = rope_pairs(q, pos), rope_pairs(k, pos)
        k = k.repeat_interleave(rep, dim=1)  # query head j uses kv head j // rep
        v = v.repeat_interleave(rep, dim=1)
        s = torch.einsum("thd,shd->hts", q, k) / math.sqrt(hd) + mask
        a = torch.einsum("hts,shd->thd", torch.softmax(s, -1), v).reshape(T, c["n_heads"] * hd)
        x = x + a @ w["wo"][l].T
        h = rmsnorm(x, w["rms_ffn"][l])
        x = x + (torch.nn.functional.silu(h @ w["w1"][l].T) * (h @ w["w3"][l].T)) @ w["w2"][l].T
    if c["n_layers"] in capture:  # the last layer's output, before the final norm
        feats[c["n_layers"]] = x.clone()
    return rmsnorm(x, w["rms_final"]) @ w["wcls"].T, feats


def greedy(w, ids, n):
    ids = list(ids)
    for _ in range(n):
        logits, _ = target_forward(w, ids, ())
        ids.append(int(logits[-1].argmax()))
    return ids[-n:]


def load_vocab_pieces(path):
    """llama2.c tokenizer.bin: int max_len, then per token float score, int len, bytes."""
    with open(path, "rb") as f:
        raw = f.read()
    off, pieces = 4, []
    while off < len(raw):
        _, n = struct.unpack_from("<fi", raw, off)
        pieces.append(raw[off + 8:off + 8 + n])
        off += 8 + n
    return pieces


def decode(pieces, ids):
    """ids after BOS: a leading space of the first piece is dropped, as llama2.c does."""
    out, prev = b"", 1
    for t in ids:
        p = pieces[t]
        if prev == 1 and p.startswith(b" "):
            p = p[1:]
        if p.startswith(b"<0x") and p.endswith(b">") and len(p) == 6:
            p = bytes([int(p[3:5], 16)])
        out += p
        prev = t
    return out.decode("utf-8", "replace")


def check_with_medusa(medusa):
    """Cross-check the constants above with the repo's own CLI, when it is built."""
    m = ["-m", MODEL, "--tokenizer", TOKENIZER_MODEL]
    ids = json.loads(subprocess.run([medusa, "tokenize", *m, "-p", PROMPT, "--bos"], check=True,
                                    capture_output=True, text=True).stdout)
    assert ids == PROMPT_IDS, ids
    with tempfile.TemporaryDirectory() as d:
        trace = os.path.join(d, "trace.jsonl")
        subprocess.run([medusa, "generate", *m, "-p", PROMPT, "-n", "20", "--temp", "0", "--cpu",
                        "--trace", trace], check=True, capture_output=True)
        emitted = []
        with open(trace) as f:
            for line in f:
                emitted += json.loads(line)["emitted"]
    assert emitted == GREEDY_20, emitted
    print(f"medusa ({medusa}) agrees: prompt ids {ids}, greedy {emitted}")


# ---------------------------------------------------------------------------------------------
# SafeAILab's code, imported from the checkout with minimal shims


def git_blob(path):
    with open(path, "rb") as f:
        data = f.read()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def import_safeailab(repo):
    src = os.path.join(repo, "eagle", "model")
    for name, blob in KNOWN_BLOBS.items():
        got = git_blob(os.path.join(src, name))
        note = "as committed" if got == blob else f"DIFFERS from the fixture's {blob}"
        print(f"SafeAILab eagle/model/{name}: blob {got} ({note})")

    # transformers.activations.ACT2FN: only "silu" is used (config.hidden_act)
    tf = types.ModuleType("transformers")
    tf.__path__ = []
    act = types.ModuleType("transformers.activations")
    act.ACT2FN = {"silu": torch.nn.SiLU()}
    cu = types.ModuleType("transformers.configuration_utils")

    class PretrainedConfig:  # stores what it is given, as HF's does for unknown keys
        def __init__(self, **kwargs):
            for k, v in kwargs.items():
                setattr(self, k, v)

        @classmethod
        def from_pretrained(cls, path):
            if os.path.isdir(path):
                path = os.path.join(path, "config.json")
            with open(path) as f:
                return cls(**json.load(f))

    cu.PretrainedConfig = PretrainedConfig
    tf.activations, tf.configuration_utils = act, cu
    hub = types.ModuleType("huggingface_hub")

    def hf_hub_download(*a, **k):
        raise RuntimeError("no downloads in the fixture")

    hub.hf_hub_download = hf_hub_download
    sys.modules.update({"transformers": tf, "transformers.activations": act,
                        "transformers.configuration_utils": cu, "huggingface_hub": hub})
    # a package over eagle/model that does not run its __init__.py (which imports ea_model & co)
    pkg = types.ModuleType("safeailab_eagle_model")
    pkg.__path__ = [src]
    sys.modules["safeailab_eagle_model"] = pkg
    return importlib.import_module("safeailab_eagle_model.cnets")


def safeailab_default_layers(n_layers):
    """modeling_llama_kv.py LlamaModel.forward: the residual stream entering layer idx is kept when
    idx == len(self.layers)-3 or idx == len(self.layers)//2 or idx == 2 (each idx once)."""
    return [i for i in range(n_layers) if i == n_layers - 3 or i == n_layers // 2 or i == 2]


# ---------------------------------------------------------------------------------------------
# safetensors, written and read here

ST_DTYPES = {torch.float32: ("F32", "<f4"), torch.int64: ("I64", "<i8"), torch.bool: ("BOOL", "|b1")}


def write_safetensors(path, tensors):
    header, blobs, off = {"__metadata__": {"format": "pt"}}, [], 0
    for name in sorted(tensors):
        t = tensors[name].contiguous()
        code, np_dtype = ST_DTYPES[t.dtype]
        data = t.numpy().astype(np_dtype).tobytes()
        header[name] = {"dtype": code, "shape": list(t.shape), "data_offsets": [off, off + len(data)]}
        blobs.append(data)
        off += len(data)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack_from("<Q", raw)
    header = json.loads(raw[8:8 + n])
    base, out = 8 + n, {}
    np_of = {code: npd for code, npd in ST_DTYPES.values()}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        a, b = e["data_offsets"]
        arr = np.frombuffer(raw[base + a:base + b], dtype=np_of[e["dtype"]]).reshape(e["shape"])
        out[name] = torch.from_numpy(arr.copy())
    return out


# ---------------------------------------------------------------------------------------------
# the draft checkpoints


def draft_vocabulary(w):
    """The prompt's ids and the target's greedy continuation (VOCAB_TEXT_TOKENS tokens), then ids
    in the order of torch.randperm(vocab) under seed VOCAB_SEED until DRAFT_VOCAB; sorted."""
    text = PROMPT_IDS + greedy(w, PROMPT_IDS, VOCAB_TEXT_TOKENS)
    chosen = list(dict.fromkeys(text))
    g = torch.Generator().manual_seed(VOCAB_SEED)
    for t in torch.randperm(w["cfg"]["vocab"], generator=g).tolist():
        if len(chosen) == DRAFT_VOCAB:
            break
        if t not in chosen:
            chosen.append(t)
    return sorted(chosen)


def make_weights(c, seed, vocab_ids):
    H, I, nh, nkv = c["dim"], c["hidden"], c["n_heads"], c["n_kv"]
    hd = H // nh
    g = torch.Generator().manual_seed(seed)

    def rnd(*shape, scale):
        return (torch.randn(*shape, generator=g) * scale).float()

    def norm():
        return (1.0 + 0.1 * torch.randn(H, generator=g)).float()

    t = {}
    t["fc.weight"] = rnd(H, 3 * H, scale=1 / math.sqrt(3 * H))
    t["midlayer.hidden_norm.weight"] = norm()
    t["midlayer.input_layernorm.weight"] = norm()
    t["midlayer.self_attn.q_proj.weight"] = rnd(nh * hd, 2 * H, scale=2 / math.sqrt(2 * H))
    t["midlayer.self_attn.k_proj.weight"] = rnd(nkv * hd, 2 * H, scale=2 / math.sqrt(2 * H))
    t["midlayer.self_attn.v_proj.weight"] = rnd(nkv * hd, 2 * H, scale=1 / math.sqrt(2 * H))
    t["midlayer.self_attn.o_proj.weight"] = rnd(H, nh * hd, scale=1 / math.sqrt(H))
    t["midlayer.post_attention_layernorm.weight"] = norm()
    t["midlayer.mlp.gate_proj.weight"] = rnd(I, H, scale=1 / math.sqrt(H))
    t["midlayer.mlp.up_proj.weight"] = rnd(I, H, scale=1 / math.sqrt(H))
    t["midlayer.mlp.down_proj.weight"] = rnd(H, I, scale=1 / math.sqrt(I))
    t["norm.weight"] = norm()
    t["lm_head.weight"] = rnd(DRAFT_VOCAB, H, scale=3 / math.sqrt(H))
    ids = torch.tensor(vocab_ids, dtype=torch.int64)
    t["d2t"] = ids - torch.arange(DRAFT_VOCAB, dtype=torch.int64)
    t2d = torch.zeros(c["vocab"], dtype=torch.bool)
    t2d[ids] = True
    t["t2d"] = t2d
    return t


def make_config(c, layers):
    cfg = {
        "architectures": ["LlamaForCausalLMEagle3"],
        "model_type": "llama",
        "hidden_size": c["dim"],
        "intermediate_size": c["hidden"],
        "num_attention_heads": c["n_heads"],
        "num_key_value_heads": c["n_kv"],
        "num_hidden_layers": 1,
        "vocab_size": c["vocab"],
        "draft_vocab_size": DRAFT_VOCAB,
        "rms_norm_eps": 1e-05,
        "rope_theta": 10000.0,
        "rope_scaling": None,
        "max_position_embeddings": c["seq_len"],
        "hidden_act": "silu",
        "bias": False,
        "pretraining_tp": 1,
        "tie_word_embeddings": False,
        "pad_token_id": 0,
        "bos_token_id": 1,
        "eos_token_id": 2,
        "initializer_range": 0.02,
        "use_cache": True,
        "torch_dtype": "float32",
    }
    if layers is not None:
        cfg["eagle_config"] = {"eagle_aux_hidden_state_layer_ids": layers}
    return cfg


# ---------------------------------------------------------------------------------------------
# running the draft: SafeAILab's topK_genrate, and an independent recomputation


def run_safeailab(cnets, ckpt_dir, emb, hidden, input_ids, inv_freq=None):
    """inv_freq: RoPE frequencies to run the draft layer with instead of its config's (SafeAILab's
    rotary embedding knows no Llama 3 scaling; scripts/make_eagle3_rope_fixture.py gives them)."""
    config = cnets.EConfig.from_pretrained(os.path.join(ckpt_dir, "config.json"))
    with open(os.path.join(ckpt_dir, "config.json")) as f:
        bias = json.load(f).get("bias", True)  # as ea_model.py reads it
    model = cnets.Model(config, bias=bias, total_tokens=DEPTH + 1, depth=DEPTH - 1, top_k=1,
                        threshold=1.0, load_emb=False)
    sd = read_safetensors(os.path.join(ckpt_dir, "model.safetensors"))
    res = model.load_state_dict(sd, strict=False)  # as ea_model.py does
    assert list(res.unexpected_keys) == [], res.unexpected_keys
    assert list(res.missing_keys) == ["embed_tokens.weight"], res.missing_keys
    model.embed_tokens.weight.data = emb.clone()  # load_emb=True reads the target's embed_tokens
    model.float().eval()
    if inv_freq is not None:
        rot = model.midlayer.self_attn.rotary_emb
        rot.inv_freq = inv_freq.clone()
        rot._set_cos_sin_cache(seq_len=rot.max_seq_len_cached, device=inv_freq.device, dtype=torch.float32)
    model.init_tree()
    model.reset_kv()

    levels, calls = [], []
    model.logsoftmax.register_forward_hook(lambda m, i, o: levels.append(o.detach().clone()))
    fwd = model.forward

    def recording_forward(hidden_states, input_ids, **kw):
        calls.append({"hidden_width": hidden_states.shape[-1], "input_ids": input_ids.tolist(),
                      "position_ids": None if kw.get("position_ids") is None else kw["position_ids"].tolist()})
        return fwd(hidden_states, input_ids, **kw)

    model.forward = recording_forward
    fc_calls = []
    model.fc.register_forward_hook(lambda m, i, o: fc_calls.append(i[0].shape))
    with torch.no_grad():
        draft_tokens, _, _, tree_pos = model.topK_genrate(hidden, input_ids, None, None)
    assert len(levels) == DEPTH, len(levels)
    chain, gaps = [], []
    d2t = sd["d2t"]
    for lp in levels:
        lp = lp.reshape(-1)
        top2 = torch.topk(lp, 2)
        i = int(top2.indices[0])
        gaps.append(float(top2.values[0] - top2.values[1]))
        chain.append({"token": int(i + d2t[i]), "prob": float(torch.exp(top2.values[0])), "draft_id": i})
    assert draft_tokens[0].tolist() == [int(input_ids[0, -1])] + [e["token"] for e in chain]
    assert tree_pos.tolist() == list(range(DEPTH + 1))
    return chain, gaps, calls, len(fc_calls) > 0


def independent_draft(t, emb, feats, tokens, n_heads, n_kv, variant=(), inv_freq=None):
    """SafeAILab's EAGLE-3 draft, as read (not copied), written out again. variant: deliberate
    mistakes, to see that the fixture tells them apart."""
    H = emb.shape[1]
    hd = H // n_heads
    rep = n_heads // n_kv
    eps = 1e-5
    g = lambda n: t["midlayer." + n + ".weight"]
    inv = 1.0 / (10000.0 ** (torch.arange(0, hd, 2).float() / hd)) if inv_freq is None else inv_freq

    def rope(x, pos):  # x [T, heads, hd]
        if "rope_pairs" in variant:
            return rope_pairs(x, pos)
        ang = torch.outer(pos.float(), inv)
        cos, sin = torch.cat((ang, ang), -1).cos()[:, None], torch.cat((ang, ang), -1).sin()[:, None]
        rot = torch.cat((-x[..., hd // 2:], x[..., : hd // 2]), -1)
        return x * cos + rot * sin

    K, V = [], []

    def step(hid, toks, pos):
        e = rmsnorm(emb[toks], g("input_layernorm"), eps)
        h = hid if "no_hidden_norm" in variant else rmsnorm(hid, g("hidden_norm"), eps)
        x = torch.cat((h, e) if "cat_swapped" in variant else (e, h), -1)
        T = x.shape[0]
        q = rope((x @ g("self_attn.q_proj").T).view(T, n_heads, hd), pos)
        k = rope((x @ g("self_attn.k_proj").T).view(T, n_kv, hd), pos)
        v = (x @ g("self_attn.v_proj").T).view(T, n_kv, hd)
        K.append(k)
        V.append(v)
        k, v = torch.cat(K).repeat_interleave(rep, 1), torch.cat(V).repeat_interleave(rep, 1)
        S = k.shape[0]
        s = torch.einsum("thd,shd->hts", q, k) / math.sqrt(hd)
        s = s + torch.full((T, S), float("-inf")).triu(S - T + 1)
        a = torch.einsum("hts,shd->thd", torch.softmax(s, -1), v).reshape(T, H)
        res = h if "residual_normed" in variant else hid
        y = res + a @ g("self_attn.o_proj").T
        z = rmsnorm(y, g("post_attention_layernorm"), eps)
        y = y + (torch.nn.functional.silu(z @ g("mlp.gate_proj").T) * (z @ g("mlp.up_proj").T)) @ g("mlp.down_proj").T
        return y

    def head(y):
        return torch.log_softmax(rmsnorm(y, t["norm.weight"], eps) @ t["lm_head.weight"].T, -1)

    hid = feats
    if "fc_always" in variant and hid.shape[-1] == H:
        hid = torch.cat((hid, hid, hid), -1)
    if hid.shape[-1] != H:
        hid = hid @ t["fc.weight"].T
    n = hid.shape[0]
    if "tokens_unshifted" in variant:  # feature j with token j instead of j+1
        tokens = PROMPT_IDS
    y = step(hid, torch.tensor(tokens), torch.arange(n))
    last = y[-1:]
    out = []
    for lvl in range(DEPTH):
        lp = head(last)[0]
        top2 = torch.topk(lp, 2)
        i = int(top2.indices[0])
        out.append((i, float(top2.values[0].exp()), float(top2.values[0] - top2.values[1])))
        if lvl + 1 < DEPTH:
            if "feed_normed" in variant:  # the deeper level fed norm(y) instead of y
                last = rmsnorm(last, t["norm.weight"], eps)
            pos = n + lvl + (1 if "deep_positions_plus_1" in variant else 0)
            if "deep_positions_frozen" in variant:
                pos = n
            last = step(last, torch.tensor([i + int(t["d2t"][i])]), torch.tensor([pos]))
    return out


# ---------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--eagle-repo", required=True, help="a checkout of github.com/SafeAILab/EAGLE")
    ap.add_argument("--medusa", default=os.path.join(ROOT, "build", "medusa"),
                    help="the built CLI, to cross-check prompt ids and greedy text (skipped if absent)")
    ap.add_argument("--out", default=OUT)
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)

    w = load_llama2c(MODEL)
    c = w["cfg"]
    print("stories260K:", c)
    cont = greedy(w, PROMPT_IDS, 20)
    assert cont == GREEDY_20, cont
    text = decode(load_vocab_pieces(TOKENIZER_BIN), PROMPT_IDS[1:] + cont)
    assert text == GREEDY_TEXT, text
    print(f"own torch forward reproduces the greedy text: {text!r}")
    if os.path.exists(args.medusa):
        check_with_medusa(args.medusa)
    else:
        print(f"({args.medusa} not built: prompt ids and greedy text checked against the constants only)")

    cnets = import_safeailab(args.eagle_repo)
    vocab_ids = draft_vocabulary(w)
    os.makedirs(args.out, exist_ok=True)

    for name, seed, explicit in CHECKPOINTS:
        layers = explicit if explicit is not None else safeailab_default_layers(c["n_layers"])
        logits, feats = target_forward(w, PROMPT_IDS, set(layers))
        t0 = int(logits[-1].argmax())
        assert t0 == GREEDY_20[0]
        hidden = torch.cat([feats[l] for l in layers], -1)[None]  # utils.py initialize_tree: cat(dim=-1)
        input_ids = torch.tensor([PROMPT_IDS + [t0]])

        d = os.path.join(args.out, name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(make_config(c, explicit), f, indent=2)
            f.write("\n")
        tensors = make_weights(c, seed, vocab_ids)
        write_safetensors(os.path.join(d, "model.safetensors"), tensors)
        back = read_safetensors(os.path.join(d, "model.safetensors"))
        assert back.keys() == tensors.keys() and all(torch.equal(back[k], tensors[k]) for k in back)

        chain, gaps, calls, fc_applied = run_safeailab(cnets, d, w["emb"], hidden, input_ids)
        assert fc_applied == (hidden.shape[-1] != c["dim"])
        assert min(gaps) > MIN_GAP, gaps

        mine = independent_draft(tensors, w["emb"], hidden[0], PROMPT_IDS[1:] + [t0], c["n_heads"], c["n_kv"])
        for (i, p, _), e in zip(mine, chain):
            assert i == e["draft_id"] and abs(p - e["prob"]) < 1e-5, (mine, chain)

        expected = {"prompt": PROMPT, "prompt_ids": PROMPT_IDS, "first_token": t0, "layers": layers,
                    "fc_applied": fc_applied, "chain": chain}
        with open(os.path.join(d, "expected.json"), "w") as f:
            json.dump(expected, f, indent=2)
            f.write("\n")

        print(f"\n{name}: layers {layers}, feature width {hidden.shape[-1]}, fc applied: {fc_applied}, t0 {t0}")
        for k, call in enumerate(calls):
            print(f"  draft forward {k}: hidden width {call['hidden_width']}, input_ids {call['input_ids']}, "
                  f"position_ids {call['position_ids'] if call['position_ids'] is not None else 'None (arange from the cache length)'}")
        for e, gap in zip(chain, gaps):
            print(f"  token {e['token']:3d} (draft id {e['draft_id']:3d}) p {e['prob']:.6f}  top1-top2 log-prob gap {gap:.4f}")
        print("  independent recomputation agrees; deliberate mistakes give:")
        for v in ["rope_pairs", "cat_swapped", "no_hidden_norm", "residual_normed", "tokens_unshifted",
                  "feed_normed", "deep_positions_plus_1", "deep_positions_frozen", "fc_always"]:
            if v == "fc_always" and fc_applied:
                continue
            alt = independent_draft(tensors, w["emb"], hidden[0], PROMPT_IDS[1:] + [t0], c["n_heads"], c["n_kv"], (v,))
            same = [a[0] for a in alt] == [e["draft_id"] for e in chain]
            dp = max(abs(a[1] - e["prob"]) for a, e in zip(alt, chain))
            print(f"    {v:21s} chain {'same' if same else 'DIFFERS'}, max |dp| {dp:.3g}")
        wrong = {"layer_outputs": [l + 1 for l in layers]}  # the stream leaving the layers instead
        if len(layers) > 1:
            wrong["layers_reversed"] = layers[::-1]
        for v, ls in wrong.items():
            _, f2 = target_forward(w, PROMPT_IDS, set(ls))
            h2 = torch.cat([f2[l] for l in ls], -1)
            alt = independent_draft(tensors, w["emb"], h2, PROMPT_IDS[1:] + [t0], c["n_heads"], c["n_kv"])
            same = [a[0] for a in alt] == [e["draft_id"] for e in chain]
            dp = max(abs(a[1] - e["prob"]) for a, e in zip(alt, chain))
            print(f"    {v:21s} chain {'same' if same else 'DIFFERS'}, max |dp| {dp:.3g}")


def write_torch_copy(src, dst):
    """The same checkpoint as PyTorch's pytorch_model.bin (torch.save's ZIP: d2t a LongStorage, t2d a
    BoolStorage), as SafeAILab's older EAGLE checkpoints ship; same config and expected chain."""
    os.makedirs(dst, exist_ok=True)
    tensors = read_safetensors(os.path.join(src, "model.safetensors"))
    torch.save({k: tensors[k] for k in sorted(tensors)}, os.path.join(dst, "pytorch_model.bin"))
    for name in ("config.json", "expected.json"):
        with open(os.path.join(src, name)) as f, open(os.path.join(dst, name), "w") as g:
            g.write(f.read())


if __name__ == "__main__":
    main()
    write_torch_copy(os.path.join(OUT, "layers-0-2-4"), os.path.join(OUT, "layers-0-2-4-torch"))
