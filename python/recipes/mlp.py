"""Recipe: a three-layer MLP (64-256-256-10, ReLU), batch 32, SGD with momentum.

    PYTHONPATH=python python3 -m ddpsim_torch profile python/recipes/mlp.py --out mlp.yaml
"""
import torch


def build():
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(64, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, 10))
    inputs, targets = torch.randn(32, 64), torch.randint(0, 10, (32,))
    return {
        "model": model,
        "batch": (inputs, targets),
        "loss_fn": torch.nn.CrossEntropyLoss(),
        "optimizer": torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9),
    }
