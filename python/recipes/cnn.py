"""Recipe: torchvision's ResNet-18 (11.7 M parameters, 62 tensors) on a batch
of 4 images of 32 x 32, 10 classes, SGD with momentum. Small enough for a
CPU test; the parameters and their ready order are ResNet-18's own.

    PYTHONPATH=python python3 -m ddpsim_torch profile python/recipes/cnn.py --out cnn.yaml
"""
import torch
import torchvision


def build():
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10)
    inputs, targets = torch.randn(4, 3, 32, 32), torch.randint(0, 10, (4,))
    return {
        "model": model,
        "batch": (inputs, targets),
        "loss_fn": torch.nn.CrossEntropyLoss(),
        "optimizer": torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9),
    }
