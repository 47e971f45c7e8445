"""ddpsim.Scenario and ddpsim.load: a scenario from a file, a text or a dict."""
import json
import os

from . import _core


class Scenario:
    """A validated scenario: its text (YAML), its name and source. Immutable;
    replace() makes a changed copy."""

    def __init__(self, core):
        self._core = core

    @property
    def name(self) -> str:
        return self._core.name

    @property
    def text(self) -> str:
        """The YAML it was loaded from (a dict's: the YAML it was written as)."""
        return self._core.text

    @property
    def source(self) -> str:
        return self._core.source

    @property
    def world_sizes(self) -> list:
        return list(self._core.world_sizes)

    @property
    def engine(self) -> str:
        return self._core.engine

    @property
    def program(self) -> str:
        """"DDP", or FSDP's sharding strategy ("FULL_SHARD", ...)."""
        return self._core.program

    def to_dict(self) -> dict:
        """The scenario as a dict that mirrors its YAML (comments dropped)."""
        return json.loads(self._core.to_json())

    def replace(self, **sections) -> "Scenario":
        """A copy with top-level keys replaced: s.replace(world_size=[8, 64], collective={...})."""
        d = self.to_dict()
        d.update(sections)
        # Errors name the original with "(replaced)"; relative paths still read from its folder.
        return load(d, source=f"{self.source} (replaced)")

    def save(self, path):
        """Writes the scenario's YAML to `path`, for the ddpsim command."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.text)

    def __repr__(self):
        return f"<ddpsim.Scenario {self.name!r}: {self.program}, W={self.world_sizes}, {self.engine}>"


def load(scenario, *, source=None) -> Scenario:
    """A scenario from a path (str or os.PathLike), a dict that mirrors the YAML
    (written as block YAML; errors name `source`, "<dict>" unless given, with
    the line and column in scenario.text), or a Scenario (returned as is).
    Relative paths in it (calibration:) are read from the source's folder.
    Raises ddpsim.Error (exit_code 2) with the location on bad input."""
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, dict):
        text = _core.json_to_yaml(json.dumps(scenario, allow_nan=False))
        return Scenario(_core.load_text(text, source or "<dict>"))
    if isinstance(scenario, (str, os.PathLike)):
        return Scenario(_core.load(os.fspath(scenario)))
    raise TypeError(f"ddpsim.load: expected a path, a dict or a Scenario, not {type(scenario).__name__}")
