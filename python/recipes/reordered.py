"""Recipe: modules registered in one order and used in another (head first,
then the body that feeds it), with a BatchNorm (buffers). Its gradients are
ready in the reverse order of use, not of registration: what the
gradient-accumulator hooks give and the default order would not.

    PYTHONPATH=python python3 -m ddpsim_torch profile python/recipes/reordered.py --out reordered.yaml
"""
import torch


class Reordered(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.head = torch.nn.Linear(32, 4)       # registered first, used last
        self.norm = torch.nn.BatchNorm1d(32)
        self.body = torch.nn.Linear(16, 32)      # registered last, used first

    def forward(self, x):
        return self.head(torch.relu(self.norm(self.body(x))))


def build():
    torch.manual_seed(0)
    model = Reordered()
    return {
        "model": model,
        "batch": (torch.randn(16, 16), torch.randn(16, 4)),
        "loss_fn": torch.nn.MSELoss(),
        "optimizer": torch.optim.Adam(model.parameters(), lr=1e-3),
    }
