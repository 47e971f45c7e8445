"""What a recipe's memory needs, read from the recipe itself (profile.py writes it into the scenario):

- the optimizer: its torch class and the state it keeps per parameter after a step (torch.optim's
  `state`), written as the scenario's `optimizer` key (sgd, sgd_momentum, adam, adamw: none, one or
  two buffers the size of the parameters), with the measured state bytes beside it;
- activations: the tensors autograd saves for backward in one forward at the recipe's batch
  (torch.autograd.graph.saved_tensors_hooks), each storage counted once, parameters and the batch
  left out, attributed to the modules that own parameters the way forward time is (profile.py): each
  owner takes what was saved since the previous owner's forward ended, the last owner the rest up
  to the loss. Written as each layer's activation_MB (MiB per local batch).
"""
import torch

from . import recipe as recipes

MIB = 1024.0 * 1024.0


class OptimizerError(Exception):
    """An optimizer whose state ddpsim's memory model cannot express."""


def _state_bytes(optimizer):
    """Bytes of tensor state the optimizer keeps, and tensors per parameter (0-d step counters left out)."""
    total, per_param = 0, []
    for state in optimizer.state.values():
        tensors = [v for v in state.values() if torch.is_tensor(v) and v.dim() > 0]
        total += sum(t.numel() * t.element_size() for t in tensors)
        per_param.append(len(tensors))
    return total, per_param


def optimizer_kind(optimizer):
    """(scenario name, torch class name, state bytes, state tensors per parameter) after one step has run.
    The name follows the state actually kept: SGD without momentum keeps none; SGD with momentum one
    buffer; Adam and AdamW two (exp_avg, exp_avg_sq; amsgrad's third is refused)."""
    cls = type(optimizer).__name__
    total, per_param = _state_bytes(optimizer)
    buffers = max(per_param) if per_param else 0
    names = {("SGD", 0): "sgd", ("SGD", 1): "sgd_momentum", ("Adam", 2): "adam", ("AdamW", 2): "adamw"}
    name = names.get((cls, buffers))
    if name is None:
        raise OptimizerError(f"optimizer {cls} keeps {buffers} state tensor(s) per parameter ({total} bytes): "
                             "ddpsim's memory model knows SGD (0 or 1: momentum), Adam and AdamW (2); "
                             "profile with one of those, or write the scenario's optimizer key by hand")
    return name, cls, total, buffers


def _storage_key(t):
    return t.untyped_storage().data_ptr()


def activation_bytes(built):
    """Bytes saved for backward in one forward of the recipe, per parameter-owning module (name -> bytes),
    and the total. Runs forward and backward once (backward frees the saved tensors)."""
    model, (inputs, targets) = built["model"], built["batch"]
    owners = [name for name, m in model.named_modules() if any(True for _ in m.parameters(recurse=False))]
    excluded = {_storage_key(p) for p in model.parameters()} | {_storage_key(b) for b in model.buffers()}
    batch = list(inputs) if isinstance(inputs, (tuple, list)) else [inputs]
    excluded |= {_storage_key(t) for t in batch + [targets] if torch.is_tensor(t)}
    seen, pending, per_owner, last_done = set(), [0], {}, [None]

    def pack(t):
        key = _storage_key(t)
        if key not in excluded and key not in seen and t.device.type != "meta":
            seen.add(key)
            pending[0] += t.untyped_storage().nbytes()
        return t

    def forward_done(name):
        def hook(module, args, output):
            per_owner[name] = per_owner.get(name, 0) + pending[0]
            pending[0], last_done[0] = 0, name
        return hook

    handles = [m.register_forward_hook(forward_done(name)) for name, m in model.named_modules() if name in owners]
    try:
        model.train()
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            loss = built["loss_fn"](recipes.call_model(model, inputs), targets)
        if owners:  # what was saved after the last owner's forward (the loss's own) goes to that owner
            last = last_done[0] if last_done[0] is not None else owners[-1]
            per_owner[last] = per_owner.get(last, 0) + pending[0]
        loss.backward()
        built["optimizer"].zero_grad(set_to_none=True)
    finally:
        for h in handles:
            h.remove()
    return per_owner, sum(per_owner.values())
