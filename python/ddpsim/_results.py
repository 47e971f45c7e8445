"""The Python API's results: plain objects over the core's, with tables,
dicts, pandas DataFrames and a notebook's HTML."""
import dataclasses
import html
import json
from typing import List, Optional


def _dataframe(rows):
    try:
        import pandas
    except ImportError as e:
        raise ImportError("to_dataframe() needs pandas (pip install pandas)") from e
    return pandas.DataFrame([dataclasses.asdict(r) for r in rows])


@dataclasses.dataclass(frozen=True)
class Run:
    """One row of a sweep, as the JSON's runs[] has it (`ddpsim run --json`)."""
    world_size: int
    bucket_cap_mb: float
    outcome: str
    step_ms: Optional[float]
    baseline_step_ms: Optional[float]
    speedup: Optional[float]
    efficiency: Optional[float]
    closed_form_step_ms: float
    global_batch: int
    exposed_comm_ms: float
    peak_memory_bytes: int
    fits: Optional[bool]


def _copy(cls, core):
    return cls(**{f.name: getattr(core, f.name) for f in dataclasses.fields(cls)})


class Result:
    """A simulated sweep: .runs (one Run a bucket cap and world size), and every
    rendering the command line writes (table, json, csv, svg, html)."""

    def __init__(self, core):
        self._core = core
        self.runs: List[Run] = [_copy(Run, r) for r in core.runs]

    @property
    def scenario(self) -> str:
        return self._core.scenario

    @property
    def engine(self) -> str:
        return self._core.engine

    def table(self) -> str:
        """`ddpsim run`'s scaling table."""
        return self._core.table()

    def json(self) -> str:
        """`ddpsim run --json`, byte for byte."""
        return self._core.json()

    def to_dict(self) -> dict:
        return json.loads(self._core.json())

    def csv(self) -> str:
        return self._core.csv()

    def svg(self) -> str:
        """Step time and efficiency against W (`ddpsim run --plot`)."""
        return self._core.svg()

    def html(self) -> str:
        """The report as one self-contained page (`ddpsim report --html`)."""
        return self._core.html()

    def to_dataframe(self):
        """The runs as a pandas DataFrame, a row each."""
        return _dataframe(self.runs)

    def _repr_html_(self):
        return self._core.html_fragment()

    def __repr__(self):
        return f"<ddpsim.Result {self.scenario!r}: {len(self.runs)} runs, {self.engine}>\n{self.table()}"


@dataclasses.dataclass(frozen=True)
class MemoryRow:
    """Memory per rank at one world size, bytes by kind (`ddpsim memory`)."""
    world_size: int
    parameters: int
    gradients: int
    optimizer_states: int
    buckets: int
    unsharded: int
    activations: int
    peak: int
    peak_at: str
    fits: Optional[bool]


class MemoryReport:
    """`ddpsim memory`'s rows (.rows), text (.text) and JSON (.json)."""

    def __init__(self, core):
        self.scenario: str = core.scenario
        self.program: str = core.program
        self.device_bytes: Optional[int] = core.device_bytes
        self.rows: List[MemoryRow] = [_copy(MemoryRow, r) for r in core.rows]
        self.text: str = core.text
        self.json: str = core.json

    def all_fit(self) -> bool:
        return all(r.fits is not False for r in self.rows)

    def to_dataframe(self):
        return _dataframe(self.rows)

    def _repr_html_(self):
        return f"<pre>{html.escape(self.text)}</pre>"

    def __repr__(self):
        return self.text


@dataclasses.dataclass(frozen=True)
class Bucket:
    """One of DDP's gradient buckets: its bytes, dtype and parameters (names)."""
    bytes: int
    dtype: str
    params: List[str]


class BucketReport:
    """`ddpsim buckets`: DDP's buckets as built (.initial) and rebuilt after the first
    iteration (.rebuilt, None when DDP does not rebuild), its text and JSON."""

    def __init__(self, core):
        self.bucket_cap_bytes: int = core.bucket_cap_bytes
        self.initial: List[Bucket] = [_copy(Bucket, b) for b in core.initial]
        self.rebuilt: Optional[List[Bucket]] = (None if core.rebuilt is None
                                                else [_copy(Bucket, b) for b in core.rebuilt])
        self.rebuild_iteration: Optional[int] = core.rebuild_iteration
        self.text: str = core.text
        self.json: str = core.json

    def __repr__(self):
        return self.text


@dataclasses.dataclass(frozen=True)
class Candidate:
    """One configuration the advisor simulated."""
    description: str
    program: str
    bucket_cap_mb: float
    comm_hook: str
    accumulation: int
    world_size: int
    checkpointing: bool
    step_ms: Optional[float]
    samples_per_s: float
    efficiency: float
    peak_bytes: int
    fits: bool
    outcome: str
    objective: float


class Advice:
    """`ddpsim advise`: .ranked (best first), .dropped, .reasons, and its text, JSON and HTML."""

    def __init__(self, core):
        self.scenario: str = core.scenario
        self.objective: str = core.objective
        self.ranked: List[Candidate] = [_copy(Candidate, c) for c in core.ranked]
        self.dropped: List[Candidate] = [_copy(Candidate, c) for c in core.dropped]
        self.reasons: List[str] = list(core.reasons)
        self.text: str = core.text
        self.json: str = core.json
        self.html: str = core.html

    def to_dataframe(self):
        return _dataframe(self.ranked)

    def _repr_html_(self):
        return f"<pre>{html.escape(self.text)}</pre>"

    def __repr__(self):
        return self.text


@dataclasses.dataclass(frozen=True)
class Explanation:
    """The hang report of one folder of flight-recorder dumps (`ddpsim explain`)."""
    folder: str
    stuck: bool
    collective_seq_id: int
    waiting: List[int]
    missing: List[int]
    culprit: int
    reason: str
    fix: str
    text: str
