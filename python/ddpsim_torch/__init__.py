"""ddpsim_torch: a real PyTorch job, seen by ddpsim.

Profiles a training recipe on one device and writes a ddpsim scenario from
what it measured (`python3 -m ddpsim_torch profile RECIPE.py --out S.yaml`).
Pure Python: torch and the standard library only; checked on the pinned
torch 2.14.1 (python/requirements.txt), on the CPU, and with --device cuda
on a GPU (validate/gpu/torch_w1.sh).
"""

__all__ = ["recipe", "profile", "StepLog"]

from .steplog import StepLog  # a user's own training loop writes the rank logs ddpsim validate reads

# The project's version (CMakeLists.txt, pyproject.toml, ddpsim.__version__): ctest python.pytest checks they agree.
__version__ = "0.1.0"
