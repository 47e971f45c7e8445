"""ddpsim.torch: profile a PyTorch model object from a training script into a
scenario, and the torch side's tools (python/ddpsim_torch: profile, sweep,
measure, overlap, network; `ddpsim profile ...` runs them on a recipe file).

    import ddpsim, ddpsim.torch
    scenario = ddpsim.torch.profile(model, (inputs, targets), loss_fn, optimizer, world_sizes=[8, 64, 512])
    ddpsim.run(scenario.replace(collective={...})).to_dataframe()

Needs torch (not a dependency of the ddpsim package: pip install torch).
"""
from . import _scenario


def profile(model, batch, loss_fn, optimizer, *, world_sizes=(1, 2, 4, 8), steps=10, warmup=3, name="model",
            collective=None):
    """Times `model` training on `batch` = (inputs, targets) with `loss_fn` and `optimizer`
    here, in this process, as `ddpsim profile` times a recipe (ddpsim_torch/profile.py:
    forward and backward per module owning parameters, the gradients' ready order, the
    optimizer step, the optimizer's state and the activations saved for backward; no DDP
    run, so ddpsim's default bucket copy rate), and returns the Scenario.

    collective: a dict for the scenario's collective section (latency_us, bandwidth_GBps,
    backend, ...); without it the section holds placeholders, which every prediction marks.
    The model is left as it was given: trained `warmup + steps` steps further."""
    from ddpsim_torch import memory as torch_memory
    from ddpsim_torch import profile as torch_profile

    built = {"model": model, "batch": tuple(batch), "loss_fn": loss_fn, "optimizer": optimizer}
    m = torch_profile.measure(built, steps, warmup)
    m["optimizer"] = torch_memory.optimizer_kind(optimizer)
    m["activations"], _ = torch_memory.activation_bytes(built)
    text = torch_profile.scenario_yaml(f"{name}.py", m, list(world_sizes), steps, warmup,
                                       header="ddpsim.torch.profile(model, ...)")
    loaded = _scenario.Scenario(_scenario._core.load_text(text, f"<profile of {name}>"))
    return loaded.replace(collective=collective) if collective is not None else loaded
