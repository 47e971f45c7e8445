"""Writes models/presets/*.yaml: each model's parameters in registration
order (name, shape, dtype), its buffers, and the order in which PyTorch's
autograd makes each gradient ready in one backward pass.

Needs torch and torchvision, nothing else (the presets were written with
torch 1.13; tests/torch_oracle.py checks them against the pinned 2.14.1's
DDP); ddpsim itself never runs Python. Re-run after changing a model definition:
    $(scripts/python.sh) scripts/extract_presets.py

ResNets and ResNeXts come from torchvision; the ready order is measured as
`python3 -m ddpsim_torch profile` measures it (ddpsim_torch.profile). BERT-base and GPT-2 small are re-declared
here with Hugging Face transformers' module names, shapes and data flow
(BertModel with pooler; GPT2LMHeadModel with lm_head tied to wte), so that
no transformers package is needed.
"""
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from ddpsim_torch import profile  # noqa: E402  (the ready order as profile measures it)

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", "presets")

DTYPES = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16",
          torch.float64: "float64", torch.int64: "int64", torch.int32: "int32",
          torch.bool: "bool", torch.uint8: "uint8"}


# --- BERT-base (transformers BertModel, add_pooling_layer=True) -------------
class BertEmbeddings(nn.Module):
    def __init__(self, vocab=30522, hidden=768, max_pos=512, types=2):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, hidden)
        self.position_embeddings = nn.Embedding(max_pos, hidden)
        self.token_type_embeddings = nn.Embedding(types, hidden)
        self.LayerNorm = nn.LayerNorm(hidden, eps=1e-12)
        self.register_buffer("position_ids", torch.arange(max_pos).expand((1, -1)))

    def forward(self, ids):
        n = ids.shape[1]
        pos = self.position_ids[:, :n]
        types = torch.zeros_like(ids)
        x = self.word_embeddings(ids) + self.token_type_embeddings(types) + self.position_embeddings(pos)
        return self.LayerNorm(x)


class BertSelfAttention(nn.Module):
    def __init__(self, hidden=768, heads=12):
        super().__init__()
        self.heads = heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)

    def forward(self, x):
        b, n, h = x.shape
        split = lambda t: t.view(b, n, self.heads, h // self.heads).transpose(1, 2)
        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(h // self.heads), dim=-1)
        return (att @ v).transpose(1, 2).reshape(b, n, h)


class BertSelfOutput(nn.Module):
    def __init__(self, hidden=768):
        super().__init__()
        self.dense = nn.Linear(hidden, hidden)
        self.LayerNorm = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x, residual):
        return self.LayerNorm(self.dense(x) + residual)


class BertAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.self = BertSelfAttention()
        self.output = BertSelfOutput()

    def forward(self, x):
        return self.output(self.self(x), x)


class BertIntermediate(nn.Module):
    def __init__(self, hidden=768, inner=3072):
        super().__init__()
        self.dense = nn.Linear(hidden, inner)

    def forward(self, x):
        return F.gelu(self.dense(x))


class BertOutput(nn.Module):
    def __init__(self, hidden=768, inner=3072):
        super().__init__()
        self.dense = nn.Linear(inner, hidden)
        self.LayerNorm = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x, residual):
        return self.LayerNorm(self.dense(x) + residual)


class BertLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = BertAttention()
        self.intermediate = BertIntermediate()
        self.output = BertOutput()

    def forward(self, x):
        a = self.attention(x)
        return self.output(self.intermediate(a), a)


class BertEncoder(nn.Module):
    def __init__(self, layers=12):
        super().__init__()
        self.layer = nn.ModuleList([BertLayer() for _ in range(layers)])

    def forward(self, x):
        for layer in self.layer:
            x = layer(x)
        return x


class BertPooler(nn.Module):
    def __init__(self, hidden=768):
        super().__init__()
        self.dense = nn.Linear(hidden, hidden)

    def forward(self, x):
        return torch.tanh(self.dense(x[:, 0]))


class BertModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embeddings = BertEmbeddings()
        self.encoder = BertEncoder()
        self.pooler = BertPooler()

    def forward(self, ids):
        seq = self.encoder(self.embeddings(ids))
        return seq, self.pooler(seq)


# --- GPT-2 small (transformers GPT2LMHeadModel, lm_head tied to wte) --------
class Conv1D(nn.Module):
    """transformers.pytorch_utils.Conv1D: weight is (in, out)."""

    def __init__(self, nf, nx):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(nx, nf) * 0.02)
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        return torch.addmm(self.bias, x.reshape(-1, x.shape[-1]), self.weight).view(*x.shape[:-1], -1)


class GPT2Attention(nn.Module):
    def __init__(self, hidden=768, heads=12, max_pos=1024):
        super().__init__()
        self.heads = heads
        self.register_buffer("bias", torch.tril(torch.ones((max_pos, max_pos), dtype=torch.bool)).view(1, 1, max_pos, max_pos))
        self.register_buffer("masked_bias", torch.tensor(-1e4))
        self.c_attn = Conv1D(3 * hidden, hidden)
        self.c_proj = Conv1D(hidden, hidden)

    def forward(self, x):
        b, n, h = x.shape
        q, k, v = self.c_attn(x).split(h, dim=2)
        split = lambda t: t.view(b, n, self.heads, h // self.heads).transpose(1, 2)
        q, k, v = split(q), split(k), split(v)
        att = q @ k.transpose(-1, -2) / math.sqrt(h // self.heads)
        att = torch.where(self.bias[:, :, :n, :n].bool(), att, self.masked_bias.to(att.dtype))
        y = (torch.softmax(att, dim=-1) @ v).transpose(1, 2).reshape(b, n, h)
        return self.c_proj(y)


class GPT2MLP(nn.Module):
    def __init__(self, hidden=768, inner=3072):
        super().__init__()
        self.c_fc = Conv1D(inner, hidden)
        self.c_proj = Conv1D(hidden, inner)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x)))


class GPT2Block(nn.Module):
    def __init__(self, hidden=768):
        super().__init__()
        self.ln_1 = nn.LayerNorm(hidden)
        self.attn = GPT2Attention()
        self.ln_2 = nn.LayerNorm(hidden)
        self.mlp = GPT2MLP()

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT2Model(nn.Module):
    def __init__(self, vocab=50257, hidden=768, max_pos=1024, layers=12):
        super().__init__()
        self.wte = nn.Embedding(vocab, hidden)
        self.wpe = nn.Embedding(max_pos, hidden)
        self.h = nn.ModuleList([GPT2Block() for _ in range(layers)])
        self.ln_f = nn.LayerNorm(hidden)

    def forward(self, ids):
        pos = torch.arange(ids.shape[1]).unsqueeze(0)
        x = self.wte(ids) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        return self.ln_f(x)


class GPT2LMHeadModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.transformer = GPT2Model()
        self.lm_head = nn.Linear(768, 50257, bias=False)
        self.lm_head.weight = self.transformer.wte.weight  # tied

    def forward(self, ids):
        return self.lm_head(self.transformer(ids))


def ready_order(model, loss_fn):
    """Order in which AccumulateGrad post-hooks fire (the hooks DDP's Reducer uses), as
    `python3 -m ddpsim_torch profile` measures it."""
    torch.manual_seed(0)
    return profile.gradient_ready_order(model, lambda m: loss_fn(m).backward())


def write(name, model, loss_fn, source):
    params = list(model.named_parameters())  # drops shared (tied) parameters
    order = ready_order(model, loss_fn)
    assert sorted(order) == sorted(n for n, _ in params), "every parameter must get a gradient"
    total = sum(p.numel() for _, p in params)
    path = os.path.join(OUT, name + ".yaml")
    with open(path, "w") as f:
        f.write(f"# Generated by scripts/extract_presets.py; do not edit.\n")
        f.write(f"# {source}\n# torch {torch.__version__}, torchvision {torchvision.__version__}\n")
        f.write(f"# {len(params)} parameter tensors, {total:,} parameters\n")
        f.write(f"name: {name}\n")
        f.write("parameters:  # named_parameters(), registration order\n")
        for n, p in params:
            f.write(f"  - {{name: {n}, shape: {list(p.shape)}, dtype: {DTYPES[p.dtype]}}}\n")
        reverse = [n for n, _ in reversed(params)]
        if order == reverse:
            f.write("# gradient_ready_order: reverse registration order (the default)\n")
        else:
            f.write("gradient_ready_order:  # AccumulateGrad hook order in one backward\n")
            for n in order:
                f.write(f"  - {n}\n")
        bufs = list(model.named_buffers())
        if bufs:
            f.write("buffers:  # broadcast from rank 0 before each forward (broadcast_buffers)\n")
            for n, b in bufs:
                f.write(f"  - {{name: {n}, shape: {list(b.shape)}, dtype: {DTYPES[b.dtype]}}}\n")
    print(f"{path}: {len(params)} tensors, {total:,} parameters, {len(bufs)} buffers, "
          f"ready order {'= reverse' if order == reverse else 'differs from reverse'}")


def main():
    os.makedirs(OUT, exist_ok=True)
    image = lambda m: m(torch.randn(2, 3, 64, 64)).sum()
    tokens = lambda vocab: (lambda m: (lambda out: sum(o.sum() for o in out) if isinstance(out, tuple) else out.sum())(
        m(torch.randint(0, vocab, (2, 16)))))
    write("resnet18", torchvision.models.resnet18(), image, "torchvision.models.resnet18()")
    write("resnet50", torchvision.models.resnet50(), image, "torchvision.models.resnet50()")
    for name in ("resnet101", "resnext50_32x4d", "resnext101_32x8d"):  # PyTorch's V100 DDP benchmark
        write(name, getattr(torchvision.models, name)(), image, f"torchvision.models.{name}()")
    write("bert-base", BertModel(), tokens(30522),
          "BERT-base with pooler: transformers BertModel names and data flow; loss = sum(sequence) + sum(pooled)")
    write("gpt2-small", GPT2LMHeadModel(), tokens(50257),
          "GPT-2 small: transformers GPT2LMHeadModel names and data flow, lm_head tied to wte")
    lin = nn.Linear(8, 1)
    write("linear-8-1", lin, lambda m: F.mse_loss(m(torch.randn(8, 8)), torch.randn(8, 1)),
          "torch.nn.Linear(8, 1), the seed chapter's ddp_epoch.py model")


if __name__ == "__main__":
    sys.exit(main())
