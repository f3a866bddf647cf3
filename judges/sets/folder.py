"""A planted set's folder and the files the harness reads and writes in it, each named here
alone (a layout test keeps it so):

planted_sets/<judge>/items.jsonl                the planted items, one per line
planted_sets/<judge>/replies.jsonl              a judge callable's reply fixtures
planted_sets/<judge>/derived.toml               how generated items derive from hand ones
planted_sets/<judge>/probes.toml                the bias probes' recipe
planted_sets/<judge>/probes.jsonl               the probe items it generates
planted_sets/<judge>/set.toml                   what the set runs: versions, noise, panel, ...
planted_sets/<judge>/gates.toml                 floors and the accepted baseline, per judge
                                                model and prompt version
planted_sets/<judge>/expectations.toml          accepted misses (strict xfails), likewise
planted_sets/<judge>/probe_expectations.toml    accepted bias-probe failures, per probe
planted_sets/<judge>/accepted.toml              accepted baselines' pinned prompts, cassettes
planted_sets/<judge>/accepted-cassettes.sha256  and results; the pinned cassettes' digests

Reading returns the raw tables, with errors naming the file (`judges.sets.tables`); what a
table means is checked by its loader (`planted`, `pins`, `probes`). Writing goes through the
one TOML writer (`judges.storage.toml_files`), each file with its header for the reader.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The readers, the writer and the version order are imported where they are used: the CLI's
# help and messages import this module for the file names, and stay quick to start.

ITEMS_FILE = "items.jsonl"
REPLIES_FILE = "replies.jsonl"
DERIVED_FILE = "derived.toml"
PROBES_FILE = "probes.toml"
PROBE_ITEMS_FILE = "probes.jsonl"
SET_FILE = "set.toml"
GATES_FILE = "gates.toml"
EXPECTATIONS_FILE = "expectations.toml"
PROBE_EXPECTATIONS_FILE = "probe_expectations.toml"
PINS_FILE = "accepted.toml"
PINNED_CASSETTES_FILE = "accepted-cassettes.sha256"

# (model, version) -> table: the shape of gates.toml, expectations.toml and accepted.toml.
Tables = Mapping[tuple[str, str], Mapping[str, Any]]

GATES_HEADER = """\
Gates per judge model and prompt version.
baseline: the prompt version whose recorded main run is the accepted baseline. A run fails
  its regression gates only when it is significantly worse than that run: the paired exact
  McNemar test, one-sided at alpha (default 0.05), on detection and control false positives.
min_* / max_*: absolute floors the team owns. `python -m judges baseline` suggests one
  where none is set (a bound the next run of a judge as good as the accepted one reaches
  with probability 0.9975, so twenty such floors all hold 95% of the time; rounded down to
  0.05, up for max_*) and keeps the ones already here; never one below chance.
accept_not_fit: why a judge that is NOT FIT (no better than chance at what the set
  measures) is kept; its fitness test is then a strict xfail. Never inherited."""

EXPECTATIONS_HEADER = """\
Accepted misses per judge model and prompt version: each is a strict xfail.
Written by `python -m judges baseline` from the recorded baseline; edit the
reasons by hand. A fixed item shows as XPASS: remove its line."""

PROBE_EXPECTATIONS_HEADER = """\
Accepted bias-probe failures per judge model and prompt version, one table per
probe: each is a strict xfail. Written by `python -m judges baseline`; edit the
reasons by hand. A probe the judge now resists shows as XPASS: remove its line."""

PINS_HEADER = f"""\
Accepted baselines, pinned by `python -m judges baseline --accept`: the prompt
files each was recorded with, its cassettes (listed in {PINNED_CASSETTES_FILE}) and
its results. A pinned prompt is never edited (add a new version instead), and
`pytest --record` never replaces its cassettes unless given --rerecord-baseline."""

PINNED_CASSETTES_HEADER = f"""# The cassettes of the accepted baselines ({PINS_FILE}), pinned by
# `python -m judges baseline --accept`: check them with `sha256sum -c` from cassettes/.
"""


def in_order(tables: Tables) -> list[tuple[tuple[str, str], Mapping[str, Any]]]:
    """Tables by model, then prompt version (numerically: 0.10 after 0.9)."""
    from judges.core.spec import version_key

    return sorted(tables.items(), key=lambda pair: (pair[0][0], version_key(pair[0][1])))


@dataclass(frozen=True)
class SetFolder:
    """The folder `root/judge` of one planted set: its files' paths, read and written."""

    root: Path
    judge: str

    @classmethod
    def at(cls, path: Path) -> SetFolder:
        """The set whose folder is `path` (`planted_sets/<judge>`)."""
        return cls(path.parent, path.name)

    @property
    def path(self) -> Path:
        return self.root / self.judge

    @property
    def items_path(self) -> Path:
        return self.path / ITEMS_FILE

    @property
    def replies_path(self) -> Path:
        return self.path / REPLIES_FILE

    @property
    def derived_path(self) -> Path:
        return self.path / DERIVED_FILE

    @property
    def probes_path(self) -> Path:
        return self.path / PROBES_FILE

    @property
    def probe_items_path(self) -> Path:
        return self.path / PROBE_ITEMS_FILE

    @property
    def config_path(self) -> Path:
        return self.path / SET_FILE

    @property
    def gates_path(self) -> Path:
        return self.path / GATES_FILE

    @property
    def expectations_path(self) -> Path:
        return self.path / EXPECTATIONS_FILE

    @property
    def probe_expectations_path(self) -> Path:
        return self.path / PROBE_EXPECTATIONS_FILE

    @property
    def pins_path(self) -> Path:
        return self.path / PINS_FILE

    @property
    def pinned_cassettes_path(self) -> Path:
        return self.path / PINNED_CASSETTES_FILE

    # ------------------------------------------------------------------ reading

    def read_config(self) -> dict[str, Any]:
        """set.toml as a table ({} when absent); `SetConfig` says what it means."""
        from judges.sets.tables import load_toml

        return load_toml(self.config_path)

    def read_gates(self) -> dict[tuple[str, str], dict[str, Any]]:
        """gates.toml's raw tables by (model, version); `planted.Gates` checks each."""
        return _tables(self.gates_path)

    def read_expectations(self) -> dict[tuple[str, str], dict[str, str]]:
        """expectations.toml: (model, version) -> item id -> why its miss is accepted."""
        return _tables(self.expectations_path)

    def read_probe_expectations(self) -> dict[tuple[str, str], dict[str, dict[str, str]]]:
        """probe_expectations.toml: (model, version) -> probe -> item id -> reason."""
        return _tables(self.probe_expectations_path)

    def read_pins(self) -> dict[tuple[str, str], dict[str, Any]]:
        """accepted.toml's raw tables by (model, version); `pins.load_pins` checks each."""
        return _tables(self.pins_path)

    def read_pinned_cassettes(self) -> dict[str, str]:
        """accepted-cassettes.sha256: path under the cassettes folder -> sha256."""
        from judges.sets.items import PlantedSetError

        path = self.pinned_cassettes_path
        if not path.is_file():
            return {}
        files: dict[str, str] = {}
        from judges.storage.files import jsonl_lines

        # Lines end at "\n" alone: a cassette's path may hold U+2028 (str.splitlines splits it).
        for number, line in enumerate(jsonl_lines(path.read_text(encoding="utf-8")), 1):
            if not line.strip() or line.startswith("#"):
                continue
            digest, _, name = line.partition("  ")
            if len(digest) != 64 or not name:
                raise PlantedSetError(
                    f"{path}:{number}: expected `<sha256>  <path under cassettes/>`, as "
                    "`python -m judges baseline --accept` writes it"
                )
            files[name] = digest
        return files

    # ------------------------------------------------------------------ writing

    def write_gates(self, tables: Tables) -> Path:
        """gates.toml, tables by model and version, under its header."""
        return self._write_tables(self.gates_path, GATES_HEADER, tables)

    def write_expectations(self, tables: Tables) -> Path:
        """expectations.toml: (model, version) -> item id -> reason, under its header."""
        return self._write_tables(self.expectations_path, EXPECTATIONS_HEADER, tables)

    def write_probe_expectations(
        self, tables: Mapping[tuple[str, str], Mapping[str, Mapping[str, str]]]
    ) -> Path:
        """probe_expectations.toml: one `["model"."version".<probe>]` table per probe, its
        items in id order."""
        probes = {
            (model, version, probe): dict(sorted(items.items()))
            for (model, version), by_probe in tables.items()
            for probe, items in by_probe.items()
        }
        ordered = sorted(probes.items(), key=_probe_order(tables))
        return _write(self.probe_expectations_path, PROBE_EXPECTATIONS_HEADER, ordered)

    def write_pins(self, tables: Tables, cassettes: Mapping[str, str] | None) -> Path:
        """accepted.toml, and accepted-cassettes.sha256 when `cassettes` (path -> sha256)
        lists any or the file exists already (a pin's cassettes all gone rewrites it)."""
        from judges.storage.files import atomic_write_text

        path = self._write_tables(self.pins_path, PINS_HEADER, tables)
        manifest = self.pinned_cassettes_path
        if cassettes or manifest.is_file():
            listing = "".join(
                f"{digest}  {name}\n" for name, digest in sorted((cassettes or {}).items())
            )
            atomic_write_text(manifest, PINNED_CASSETTES_HEADER + listing)
        return path

    def _write_tables(self, path: Path, header: str, tables: Tables) -> Path:
        return _write(path, header, in_order(tables))


def _tables(path: Path) -> dict[tuple[str, str], Any]:
    """A file of `["model"."version"]` tables; errors name the file (PlantedSetError)."""
    from judges.sets.tables import load_tables

    return load_tables(path)


def _write(path: Path, header: str, tables: Iterable[tuple[tuple[str, ...], Any]]) -> Path:
    """Through the one TOML writer; a value it refuses is the set's error, naming the file."""
    from judges.sets.items import PlantedSetError
    from judges.storage.toml_files import write_toml

    return write_toml(path, header=header, tables=tables, error=PlantedSetError)


def _probe_order(tables: Mapping[tuple[str, str], Any]) -> Any:
    """Probe tables by model and version, then in the order each version lists its probes."""
    from judges.core.spec import version_key

    rank = {
        (model, version, probe): index
        for (model, version), by_probe in tables.items()
        for index, probe in enumerate(by_probe)
    }
    return lambda pair: (pair[0][0], version_key(pair[0][1]), rank[pair[0]])
