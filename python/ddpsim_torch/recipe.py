"""A recipe: a Python file defining build(), which returns a dict with

    model      a torch.nn.Module
    batch      one local batch: a tuple (inputs, targets); inputs a tensor or a tuple of tensors
    loss_fn    called as loss_fn(model(inputs), targets)
    optimizer  built on model.parameters()

Examples: python/recipes/.
"""
import importlib.util
import os
import time

KEYS = ("model", "batch", "loss_fn", "optimizer")


class RecipeError(Exception):
    """A recipe that cannot be used: the file and what is wrong."""


def load(path):
    """The dict build() returns, checked to hold what a recipe promises."""
    if not os.path.isfile(path):
        raise RecipeError(f"{path}: no such recipe file")
    spec = importlib.util.spec_from_file_location("ddpsim_recipe", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not callable(getattr(module, "build", None)):
        raise RecipeError(f"{path}: defines no build() function")
    built = module.build()
    if not isinstance(built, dict):
        raise RecipeError(f"{path}: build() returned {type(built).__name__}, expected a dict with {', '.join(KEYS)}")
    missing = [k for k in KEYS if k not in built]
    if missing:
        raise RecipeError(f"{path}: build()'s dict lacks {', '.join(missing)}")
    batch = built["batch"]
    if not (isinstance(batch, (tuple, list)) and len(batch) == 2):
        raise RecipeError(f"{path}: 'batch' must be a tuple (inputs, targets)")
    return built


def call_model(model, inputs):
    """model(inputs), or model(*inputs) for a tuple of inputs."""
    return model(*inputs) if isinstance(inputs, (tuple, list)) else model(inputs)


def batch_size(inputs):
    """The local batch size: the first dimension of the (first) input."""
    first = inputs[0] if isinstance(inputs, (tuple, list)) else inputs
    return int(first.shape[0])


def timed_step(model, built, mark=time.perf_counter_ns):
    """One training step of the recipe on `model` (its model, or DDP around it): mark() at the start,
    after the loss, after backward, after optimizer.step() and zero_grad() (a clock's marks, clock.py)."""
    (inputs, targets), optimizer = built["batch"], built["optimizer"]
    t0 = mark()
    loss = built["loss_fn"](call_model(model, inputs), targets)
    t1 = mark()
    loss.backward()
    t2 = mark()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return t0, t1, t2, mark()


def to_device(built, device):
    """The recipe's model and batch moved to `device` (the optimizer keeps the same parameters)."""
    if device == "cpu":
        return built
    inputs, targets = built["batch"]
    move = (lambda t: tuple(x.to(device) for x in t)) if isinstance(inputs, (tuple, list)) else (lambda t: t.to(device))
    built["model"] = built["model"].to(device)
    built["batch"] = (move(inputs), targets.to(device))
    return built


def set_first_bucket(mb):
    """DDP's first rebuilt bucket cap, dist._DEFAULT_FIRST_BUCKET_BYTES (1 MiB by default; PyTorch reads it
    when DistributedDataParallel is built, "User can set dist._DEFAULT_FIRST_BUCKET_BYTES")."""
    import torch.distributed as dist
    dist._DEFAULT_FIRST_BUCKET_BYTES = int(mb * (1 << 20))


def ddp_bucket_args(bucket_cap_mb, first_bucket_mb):
    """DistributedDataParallel's bucket keyword arguments for --bucket-cap-mb and --first-bucket-mb (None: not
    given), with the first bucket's cap set where DDP reads it. Since PyTorch 2.3 a bucket_cap_mb passed to DDP
    caps the first bucket too (_BucketCapacityConfig.create in torch/nn/parallel/distributed.py), and
    dist._DEFAULT_FIRST_BUCKET_BYTES counts only under DDP's default cap: both together are refused there."""
    if bucket_cap_mb is not None and first_bucket_mb is not None and first_bucket_caps_follow_cap():
        raise RecipeError(f"--first-bucket-mb with --bucket-cap-mb: torch {torch_version()} caps DDP's first bucket at "
                          "bucket_cap_mb whenever it is given; give one of the two")
    set_first_bucket(1.0 if first_bucket_mb is None else first_bucket_mb)
    return {} if bucket_cap_mb is None else {"bucket_cap_mb": bucket_cap_mb}


def first_bucket_mb(bucket_cap_mb, first_bucket_mb):
    """The first rebuilt bucket's cap DDP uses for these arguments (MiB)."""
    if bucket_cap_mb is not None and first_bucket_caps_follow_cap():
        return bucket_cap_mb
    return 1.0 if first_bucket_mb is None else first_bucket_mb


def torch_version():
    import torch
    return torch.__version__


def first_bucket_caps_follow_cap():
    """True from PyTorch 2.3 on: DDP(bucket_cap_mb=X) caps the first bucket at X."""
    major, minor = (int(x) for x in torch_version().split("+")[0].split(".")[:2])
    return (major, minor) >= (2, 3)


def gradient_bytes(built):
    """Bytes of the recipe's trainable parameters' gradients."""
    return sum(p.numel() * p.element_size() for p in built["model"].parameters() if p.requires_grad)
