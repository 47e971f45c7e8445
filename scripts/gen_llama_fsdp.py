#!/usr/bin/python3
"""Writes scenarios/published/llama2_*_{a100,h100}.yaml: the Llama 2 rows of
"Maximizing training throughput using PyTorch FSDP" (Team PyTorch at IBM and
at Meta, pytorch.org blog, 2024-03-13; ../shared/reference/fsdp_semantics.md
section 5, item 3), one scenario a row, every number commented with where it
came from. docs/validation.md#fsdp-llama-2-on-128-a100s-and-96-h100s holds the
table they make. Standard library only; re-run after changing a constant:

    command -p python3 scripts/gen_llama_fsdp.py

ctest's published.llama_scenarios_generated checks that the files in the
tree are this script's output.
"""
import os
import sys

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scenarios", "published")

VOCAB = 32000           # Llama 2's tokenizer
SEQ = 4096              # fms-fsdp pretraining/config/training.py: seq_length
BATCH = 2               # sequences per GPU: the blog's table, "Batch size 2"
TOKENS = SEQ * BATCH    # tokens per GPU per step

# Llama 2 shapes (fms-fsdp's model_variant 7b/13b/34b/70b: Llama 2's
# published configurations; 34b is Code Llama's, GQA with 8 KV heads).
MODELS = {
    "7b": dict(layers=32, hidden=4096, ffn=11008, kv_heads=32, heads=32),
    "13b": dict(layers=40, hidden=5120, ffn=13824, kv_heads=40, heads=40),
    "34b": dict(layers=48, hidden=8192, ffn=22016, kv_heads=8, heads=64),
    "70b": dict(layers=80, hidden=8192, ffn=28672, kv_heads=8, heads=64),
}

# The blog's table: tokens/s/GPU, and its activation checkpointing column.
# fms-fsdp's scripts/{7b,13b,34b,70b}.sh give the sharding: hsdp (shard
# group 8, pretraining/config/training.py) for 7b and 13b, fsdp for 34b and
# 70b. "Selective" is fms-fsdp's apply_fsdp_checkpointing with p = 1/2
# (every other block); the blog's 13b HFU/MFU ratio, 0.59/0.51 = 1.16, is
# what recomputing half the blocks' forward costs (1 + 1/2 x 1/3).
ROWS = {
    "7b": dict(ac="none", sharding="HYBRID_SHARD", a100=3700, h100=7500),
    "13b": dict(ac="half", sharding="HYBRID_SHARD", a100=1800, h100=3800),
    "34b": dict(ac="all", sharding="FULL_SHARD", a100=700, h100=1550),
    "70b": dict(ac="all", sharding="FULL_SHARD", a100=370, h100=800),
}

# The clusters. Peak bf16 dense TFLOP/s as the blog counts them (312, 989).
# device.efficiency is the one fitted number a GPU: the fraction of peak
# that makes the 7b row's predicted step equal its measured one (the
# published.llama2_fsdp_table test checks the fit holds within 0.5 %);
# every other row of that GPU is a prediction.
GPUS = {
    "a100": dict(
        name="A100-80GB", gpus=128, nodes=16, peak=312, efficiency=0.5606, gpu="ampere",
        intra=240, intra_note="12 NVLink3 links x 20 GB/s per GPU (scenarios/nccl/dgx_a100.yaml)",
        nics=4, nic_GBps=12.5, network="400 Gbps a node with GPUDirect RDMA (the blog); assumed 4 NICs of 100 Gbps",
        hbm_TBps=2.0),
    "h100": dict(
        name="H100-80GB", gpus=96, nodes=12, peak=989, efficiency=0.3599, gpu="hopper",
        intra=370.8, intra_note="18 NVLink4 links x 20.6 GB/s per GPU (scenarios/nccl/dgx_h100.yaml)",
        nics=4, nic_GBps=25, network="800 Gbps a node (the blog); assumed 4 NICs of 200 Gbps",
        hbm_TBps=3.35),
}


def block_params(m, i):
    h, f = m["hidden"], m["ffn"]
    kv = h // m["heads"] * m["kv_heads"]
    p = f"model.layers.{i}"
    return [
        (f"{p}.self_attn.q_proj.weight", [h, h]),
        (f"{p}.self_attn.k_proj.weight", [kv, h]),
        (f"{p}.self_attn.v_proj.weight", [kv, h]),
        (f"{p}.self_attn.o_proj.weight", [h, h]),
        (f"{p}.mlp.gate_proj.weight", [f, h]),
        (f"{p}.mlp.up_proj.weight", [f, h]),
        (f"{p}.mlp.down_proj.weight", [h, f]),
        (f"{p}.input_layernorm.weight", [h]),
        (f"{p}.post_attention_layernorm.weight", [h]),
    ]


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def mib(n_bytes):
    return round(n_bytes / 2**20, 1)


def gflop(n):
    return round(n / 1e9, 1)


def block_costs(m):
    """Forward GFLOP, backward GFLOP and kept activations (bytes) of one
    block for one local batch of TOKENS tokens."""
    h, f = m["hidden"], m["ffn"]
    kv = h // m["heads"] * m["kv_heads"]
    params = sum(numel(s) for _, s in block_params(m, 0))
    # Matrix products 2 x params x tokens; attention scores and their use
    # 2 x 2 x seq x hidden a token (the MFU convention of the blog's PaLM
    # and nanoGPT formula, 6N + 12 L h s a token for forward and backward).
    fwd = 2 * params * TOKENS + 4 * SEQ * h * TOKENS
    # Kept for backward, bf16 a token: the two RMSNorms' inputs and outputs
    # (4h), q, k, v (h + 2kv), flash attention's output (h), gate, up,
    # SiLU(gate) and their product (4f). An estimate, not a measurement.
    act = 2 * (4 * h + h + 2 * kv + h + 4 * f) * TOKENS
    return fwd, 2 * fwd, act, params


def parameters_yaml(m):
    lines = [f"    - {{name: model.embed_tokens.weight, shape: [{VOCAB}, {m['hidden']}]}}"]
    for i in range(m["layers"]):
        for name, shape in block_params(m, i):
            lines.append(f"    - {{name: {name}, shape: [{', '.join(map(str, shape))}]}}")
    lines.append(f"    - {{name: model.norm.weight, shape: [{m['hidden']}]}}")
    lines.append(f"    - {{name: lm_head.weight, shape: [{VOCAB}, {m['hidden']}]}}")
    return lines


def layers_yaml(m):
    h = m["hidden"]
    fwd, bwd, act, _ = block_costs(m)
    lines = ["    - {name: embed, params: [model.embed_tokens.weight], forward_ms: 0, backward_ms: 0}"]
    for i in range(m["layers"]):
        names = ", ".join(n for n, _ in block_params(m, i))
        lines.append(f"    - {{name: layers.{i}, params: [{names}],")
        lines.append(f"       forward_gflops: {gflop(fwd)}, backward_gflops: {gflop(bwd)}, activation_MB: {mib(act)}}}")
    head_fwd = 2 * VOCAB * h * TOKENS
    # The norm's input and output (bf16) and the logits, bf16 and the
    # float32 copy the cross-entropy loss makes.
    head_act = (2 * 2 * h + 6 * VOCAB) * TOKENS
    lines.append("    - {name: head, params: [model.norm.weight, lm_head.weight],")
    lines.append(f"       forward_gflops: {gflop(head_fwd)}, backward_gflops: {gflop(2 * head_fwd)}, "
                 f"activation_MB: {mib(head_act)}}}")
    return lines


def checkpointed(m, ac):
    if ac == "none":
        return None
    if ac == "all":
        return "[model.layers.*]   # apply_activation_checkpointing on every LlamaBlock"
    # fms-fsdp's p = 1/2: blocks 0, 2, 4, ... (its block_idx counts from 1).
    return "[" + ", ".join(f"model.layers.{i}" for i in range(0, m["layers"], 2)) + "]"


def total_params(m):
    _, _, _, block = block_costs(m)
    return block * m["layers"] + 2 * VOCAB * m["hidden"] + m["hidden"]


def optimizer_ms(m, g, sharding):
    # AdamW in fp32 over this rank's shard: parameter, gradient, m and v
    # read, parameter, m and v written, 28 bytes a parameter at HBM speed.
    shard = 8 if sharding == "HYBRID_SHARD" else g["gpus"]
    return round(total_params(m) / shard * 28 / (g["hbm_TBps"] * 1e12) * 1e3, 2)


def scenario(size, gpu):
    m, row, g = MODELS[size], ROWS[size], GPUS[gpu]
    fwd, _, act, _ = block_costs(m)
    measured = row[gpu]
    step_ms = TOKENS / measured * 1e3
    name = f"llama2_{size}_{gpu}"
    ac = checkpointed(m, row["ac"])
    ac_words = {"none": "no activation checkpointing", "half": "every other block checkpointed (the blog's Selective)",
                "all": "every block checkpointed"}[row["ac"]]
    out = [
        "# Generated by scripts/gen_llama_fsdp.py; do not edit.",
        f"# Llama 2 {size.upper()} on {g['gpus']} {g['name']}s with FSDP {row['sharding']}, {ac_words}:",
        "# a row of \"Maximizing training throughput using PyTorch FSDP\" (IBM and Meta,",
        "# pytorch.org blog, 2024-03-13; ../shared/reference/fsdp_semantics.md section 5).",
        f"# Measured {measured} tokens/s/GPU, {TOKENS} tokens a GPU a step: {step_ms:.1f} ms a step.",
        f"# {'The fit of device.efficiency' if size == '7b' else 'A prediction'}: "
        "docs/validation.md#fsdp-llama-2-on-128-a100s-and-96-h100s.",
        "#",
        f"#   build/cli/ddpsim run scenarios/published/{name}.yaml",
        f"#   build/cli/ddpsim memory scenarios/published/{name}.yaml",
        f"name: {name}",
        f"description: \"Llama 2 {size.upper()}, FSDP {row['sharding']}, {ac_words}, {g['gpus']} x {g['name']}; "
        f"IBM and Meta, 2024: {measured} tokens/s/GPU.\"",
        "seed: 0",
        f"world_size: [{g['gpus']}]",
        "",
        "training:",
        "  iterations: 4",
        "  warmup_iterations: 1",
        f"  local_batch_size: {BATCH}          # sequences of {SEQ} tokens (fms-fsdp's seq_length)",
        "",
        "model:",
        f"  # Hugging Face LlamaForCausalLM's names; {total_params(m):,} parameters.",
        "  parameters:",
        *parameters_yaml(m),
        f"  # Per block: forward {gflop(fwd)} GFLOP (2 x parameters x tokens + 4 x seq x hidden x tokens),",
        f"  # backward twice that; kept activations {mib(act)} MiB (bf16: the norms' inputs and outputs,",
        "  # q, k, v, flash attention's output, the MLP's four f-wide tensors; an estimate).",
        "  layers:",
        *layers_yaml(m),
        f"  optimizer_ms: {optimizer_ms(m, g, row['sharding'])}        # fp32 AdamW on the shard: 28 bytes a parameter "
        f"at {g['hbm_TBps']} TB/s",
    ]
    if ac:
        out.append(f"  activation_checkpointing: {ac}")
    out += [
        "",
        "optimizer: adamw                # fp32, fms-fsdp's AdamW",
        "parallelism: fsdp",
        "fsdp:",
        f"  sharding_strategy: {row['sharding']}   # fms-fsdp scripts/{size}.sh"
        + ("; shard group 8, a node" if row["sharding"] == "HYBRID_SHARD" else ""),
        "  auto_wrap_policy:",
        "    module_classes: [model.layers.*]   # LLaMABlock",
        "  mixed_precision: {param_dtype: bfloat16, reduce_dtype: bfloat16}   # fms-fsdp's bfSixteen",
        "device:",
        f"  peak_tflops: {g['peak']}               # bf16 dense, as the blog counts it",
        f"  efficiency: {g['efficiency']}             # fitted on this GPU's 7b row (see the header)",
        "  memory_GB: 80",
        "",
        "cluster:",
        f"  nodes: {g['nodes']}",
        "  gpus_per_node: 8",
        f"  gpu: {g['gpu']}",
        f"  nics_per_node: {g['nics']}           # {g['network']}",
        "  intra:",
        "    topology: star             # NVSwitch",
        "    link: nvlink",
        f"    bandwidth_GBps: {g['intra']}     # {g['intra_note']}",
        "    latency_us: 1",
        "  inter:",
        "    topology: star",
        f"    bandwidth_GBps: {g['nic_GBps']}",
        "    latency_us: 5",
        "",
        "collective:",
        "  model: nccl",
        "  launch_overhead_us: 21.5017  # DGX A100's fitted floor (scenarios/nccl/dgx_a100.yaml)",
        "",
    ]
    return name, "\n".join(out)


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else OUT
    for size in MODELS:
        for gpu in GPUS:
            name, text = scenario(size, gpu)
            with open(os.path.join(out_dir, name + ".yaml"), "w") as f:
                f.write(text)


if __name__ == "__main__":
    main()
