"""Recipe: a tiny language model whose output layer shares the embedding's
weight (as GPT-2 ties lm_head to wte): one parameter, two modules. The
shared weight's layer is the module named first; the other module's time
joins the next layer that owns a parameter.

    PYTHONPATH=python python3 -m ddpsim_torch profile python/recipes/tied.py --out tied.yaml
"""
import torch


class TiedLM(torch.nn.Module):
    def __init__(self, vocab=100, width=16):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, width)
        self.mix = torch.nn.Linear(width, width)
        self.head = torch.nn.Linear(width, vocab, bias=False)
        self.head.weight = self.embed.weight  # tied

    def forward(self, tokens):
        return self.head(torch.tanh(self.mix(self.embed(tokens))))


def build():
    torch.manual_seed(0)
    model = TiedLM()
    tokens = torch.randint(0, 100, (8, 12))
    return {
        "model": model,
        "batch": (tokens, torch.randint(0, 100, (8, 12))),
        "loss_fn": lambda logits, targets: torch.nn.functional.cross_entropy(logits.reshape(-1, 100), targets.reshape(-1)),
        "optimizer": torch.optim.SGD(model.parameters(), lr=0.1),
    }
