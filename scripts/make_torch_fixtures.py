#!/usr/bin/python3
"""Writes the small PyTorch checkpoints the tests read (tests/data/torch/), with torch.save itself.

Not part of the build: the files are committed. To regenerate them: apt-get install python3-torch,
then run this script with Debian's /usr/bin/python3. Every value is ((i*7 + j*3 + 11*k + 5*l) % 17 - 8) / 64
for element (i, j) of head k, block l (vectors: j = 0): exact in f16 and bf16, and recomputed
by tests/test_medusa_heads_formats.cpp.
"""
import os
import pickle
import zipfile

import torch
from torch import nn

DIM, VOCAB = 64, 512  # stories260K's, so the heads run on a real model in the tests
OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "data", "torch")


def value(shape, k, l, dtype):
    rows, cols = shape if len(shape) == 2 else (shape[0], 1)
    t = torch.empty(rows, cols, dtype=torch.float32)
    for i in range(rows):
        for j in range(cols):
            t[i, j] = ((i * 7 + j * 3 + 11 * k + 5 * l) % 17 - 8) / 64
    return t.reshape(shape).to(dtype)


class ResBlock(nn.Module):  # Medusa's: x + SiLU(Linear(x))
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(DIM, DIM)


def fill(heads, dtype):
    for k, head in enumerate(heads):
        for l, m in enumerate(head):
            if isinstance(m, ResBlock):
                m.linear.weight.data = value((DIM, DIM), k, l, dtype)
                m.linear.bias.data = value((DIM,), k, l, dtype)
            else:
                m.weight.data = value((VOCAB, DIM), k, l, dtype)


def main():
    os.makedirs(OUT, exist_ok=True)
    # Medusa (medusa_model.py): per head, ResBlocks then its own Linear(dim, vocab, bias=False); f16.
    heads = nn.ModuleList([nn.Sequential(ResBlock(), nn.Linear(DIM, VOCAB, bias=False)) for _ in range(2)])
    fill(heads, torch.float16)
    torch.save(heads.state_dict(), os.path.join(OUT, "medusa_lm_head.pt"))
    # Medusa's legacy layout (medusa_model_legacy.py): ResBlocks only, every head projects with the
    # model's lm_head; [ResBlock] * 2 repeats one module, so two keys share one storage; bf16.
    legacy = nn.ModuleList([nn.Sequential(*([ResBlock()] * 2)) for _ in range(3)])
    for k, head in enumerate(legacy):
        head[0].linear.weight.data = value((DIM, DIM), k, 0, torch.bfloat16)
        head[0].linear.bias.data = value((DIM,), k, 0, torch.bfloat16)
    torch.save(legacy.state_dict(), os.path.join(OUT, "legacy_medusa_lm_head.pt"))
    # Heads whose weights were saved as integers (int64): refused, naming the type.
    torch.save({"0.0.linear.weight": (value((DIM, DIM), 0, 0, torch.float32) * 64).to(torch.int64),
                "0.0.linear.bias": value((DIM,), 0, 0, torch.float32)},
               os.path.join(OUT, "int64_medusa_lm_head.pt"))
    # A checkpoint that would run a command when unpickled by Python: the reader must refuse it.
    class Evil:
        def __reduce__(self):
            return (os.system, ("echo this must never run",))

    with zipfile.ZipFile(os.path.join(OUT, "evil.pt"), "w", zipfile.ZIP_STORED) as z:
        z.writestr("evil/data.pkl", pickle.dumps({"0.0.linear.weight": Evil()}, protocol=2))
        z.writestr("evil/version", "3\n")


if __name__ == "__main__":
    main()
