"""ddpsim_torch: a real PyTorch job, seen by ddpsim.

Profiles a training recipe on one device and writes a ddpsim scenario from
what it measured (`python3 -m ddpsim_torch profile RECIPE.py --out S.yaml`).
Pure Python: torch and the standard library only, for Debian's torch 1.13
and torch 2.x, on CPU (CUDA timing comes with a later step of issue 18).
"""

__all__ = ["recipe", "profile"]

# The project's version (CMakeLists.txt); python/pyproject.toml reads it, ctest python.pytest checks they agree.
__version__ = "0.1.0"
