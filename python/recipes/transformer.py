"""Recipe: a transformer encoder (4 layers, d_model 128, 4 heads, feed-forward
512) over 16 sequences of 32 tokens, a linear head per sequence, Adam.

    PYTHONPATH=python python3 -m ddpsim_torch profile python/recipes/transformer.py --out transformer.yaml
"""
import torch


class Encoder(torch.nn.Module):
    def __init__(self, d_model=128, heads=4, layers=4, classes=10):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=512, dropout=0.0, batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = torch.nn.Linear(d_model, classes)

    def forward(self, x):
        return self.head(self.encoder(x).mean(dim=1))


def build():
    torch.manual_seed(0)
    model = Encoder()
    inputs, targets = torch.randn(16, 32, 128), torch.randint(0, 10, (16,))
    return {
        "model": model,
        "batch": (inputs, targets),
        "loss_fn": torch.nn.CrossEntropyLoss(),
        "optimizer": torch.optim.Adam(model.parameters(), lr=1e-3),
    }
