"""Recipe: a model dominated by an embedding table (50,000 x 64, 12.8 MB of
its 13 MB of gradient) feeding a two-layer MLP: bag-of-words classification
of 64 texts of 20 tokens, SGD. The table's dense gradient makes the
all-reduce large and the compute small, the opposite of the CNN.

    PYTHONPATH=python python3 -m ddpsim_torch profile python/recipes/embedding.py --out embedding.yaml
"""
import torch


class BagOfWords(torch.nn.Module):
    def __init__(self, vocabulary=50_000, dim=64, classes=10):
        super().__init__()
        self.embedding = torch.nn.Embedding(vocabulary, dim)
        self.hidden = torch.nn.Linear(dim, 128)
        self.out = torch.nn.Linear(128, classes)

    def forward(self, tokens):
        return self.out(torch.relu(self.hidden(self.embedding(tokens).mean(dim=1))))


def build():
    torch.manual_seed(0)
    model = BagOfWords()
    inputs, targets = torch.randint(0, 50_000, (64, 20)), torch.randint(0, 10, (64,))
    return {
        "model": model,
        "batch": (inputs, targets),
        "loss_fn": torch.nn.CrossEntropyLoss(),
        "optimizer": torch.optim.SGD(model.parameters(), lr=0.01),
    }
