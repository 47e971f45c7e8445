#!/usr/bin/python3
"""Oracle test: ddpsim's gradient buckets against a real PyTorch DDP.

For each preset and bucket cap, builds the model in PyTorch, wraps it in
DistributedDataParallel (gloo, one process), runs three iterations so the
buckets are rebuilt, and compares _get_ddp_logging_data()'s bucket sizes and
per-bucket parameter indices with `ddpsim buckets --json`. A cap of None is
DDP's default (no bucket_cap_mb: the first rebuilt bucket capped at 1 MiB,
dist._DEFAULT_FIRST_BUCKET_BYTES) and a scenario without the key; a cap given
is DDP(bucket_cap_mb=X), which since PyTorch 2.3 caps the first bucket at X
too, and the scenario's ddp.bucket_cap_mb: X.

Exits 77 (ctest: skipped) without torch and torchvision (scripts/setup.sh).
Usage: torch_oracle.py DDPSIM_BINARY WORK_DIR
"""
import json
import os
import subprocess
import sys

try:
    import torch
    import torch.distributed as dist
    import torchvision
    from torch.nn.parallel import DistributedDataParallel as DDP
except ImportError as e:
    print(f"SKIPPED: torch is not installed ({e})")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import extract_presets as presets  # noqa: E402  (the same model definitions as the presets)

CASES = [  # preset, model factory, input, bucket_cap_mb (None: DDP's default)
    ("resnet18", torchvision.models.resnet18, lambda: torch.randn(2, 3, 32, 32), None),
    ("resnet18", torchvision.models.resnet18, lambda: torch.randn(2, 3, 32, 32), 25),
    ("resnet18", torchvision.models.resnet18, lambda: torch.randn(2, 3, 32, 32), 35),
    ("resnet18", torchvision.models.resnet18, lambda: torch.randn(2, 3, 32, 32), 5),
    ("resnet50", torchvision.models.resnet50, lambda: torch.randn(2, 3, 32, 32), None),
    ("resnet50", torchvision.models.resnet50, lambda: torch.randn(2, 3, 32, 32), 25),
    ("resnet101", torchvision.models.resnet101, lambda: torch.randn(2, 3, 32, 32), 25),
    ("resnext50_32x4d", torchvision.models.resnext50_32x4d, lambda: torch.randn(2, 3, 32, 32), 25),
    ("resnext101_32x8d", torchvision.models.resnext101_32x8d, lambda: torch.randn(2, 3, 32, 32), 25),
    ("bert-base", presets.BertModel, lambda: torch.randint(0, 30522, (2, 8)), None),
    ("gpt2-small", presets.GPT2LMHeadModel, lambda: torch.randint(0, 50257, (1, 8)), 25),
    ("linear-8-1", lambda: torch.nn.Linear(8, 1), lambda: torch.randn(8, 8), 25),
]


def loss(out):
    return sum(o.sum() for o in out) if isinstance(out, tuple) else out.sum()


def real_buckets(factory, make_input, cap):
    torch.manual_seed(0)
    module = factory()
    # gloo cannot broadcast bool tensors (GPT-2's causal mask); buffers never
    # enter gradient buckets, so the oracle stores them as uint8.
    for m in module.modules():
        for n, b in m._buffers.items():
            if b is not None and b.dtype == torch.bool:
                m._buffers[n] = b.to(torch.uint8)
    model = DDP(module) if cap is None else DDP(module, bucket_cap_mb=cap)
    for _ in range(3):
        loss(model(make_input())).backward()
    data = model._get_ddp_logging_data()
    names = [n for n, _ in model.module.named_parameters()]
    groups = data["rebuilt_per_bucket_param_indices"].split(", ")
    return ([int(s) for s in str(data["bucket_sizes"]).split(", ")],
            [int(s) for s in data["rebuilt_bucket_sizes"].split(", ")],
            [[names[int(i)] for i in g.split()] for g in groups])


def ddpsim_buckets(binary, work, preset, cap):
    path = os.path.join(work, f"{preset}_{cap}.yaml")
    ddp = "" if cap is None else f"ddp: {{bucket_cap_mb: {cap}}}\n"
    with open(path, "w") as f:
        f.write(f"world_size: 1\nmodel: {{preset: {preset}, forward_ms: 1, backward_ms: 2}}\n"
                f"{ddp}collective: {{latency_us: 1, bandwidth_GBps: 1}}\n")
    out = path + ".json"
    subprocess.run([binary, "buckets", path, "--json", out], check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        doc = json.load(f)
    return ([b["bytes"] for b in doc["initial"]], [b["bytes"] for b in doc["rebuilt"]],
            [b["params"] for b in doc["rebuilt"]])


def main():
    binary, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    dist.init_process_group("gloo", init_method=f"file://{os.path.join(work, 'store')}", rank=0, world_size=1)
    failures = 0
    for preset, factory, make_input, cap in CASES:
        real = real_buckets(factory, make_input, cap)
        sim = ddpsim_buckets(binary, work, preset, cap)
        ok = real == sim
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {preset} bucket_cap_mb={cap if cap is not None else 'default'}: initial {sim[0]} rebuilt {sim[1]}")
        if not ok:
            print(f"     PyTorch: initial {real[0]} rebuilt {real[1]}")
            for i, (a, b) in enumerate(zip(real[2], sim[2])):
                if a != b:
                    print(f"     bucket {i}: PyTorch {a[:4]}... ddpsim {b[:4]}...")
    os.remove(os.path.join(work, "store"))
    print(f"{len(CASES) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
