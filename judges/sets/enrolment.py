"""Which prompt versions each run of a judge covers: all of them, unless a list restricts.

A judge's runs beyond the main one (noise floor, test-retest, SME calibration, panel,
reading list, bias probes) follow the judge: a new prompt file gets every run the judge
has from its first recording, with nothing to enrol by hand. A `*_versions` list in
set.toml (or `versions` in probes.toml) still restricts a run; a version it leaves out
then *lacks* that run, and its report says so and reads INCOMPLETE, never PASS.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from judges.sets.folder import PROBES_FILE, SET_FILE
from judges.sets.items import PlantedSetError
from judges.sets.set_config import SetConfig


# What enrolment reads of a planted set and of a probe set, as protocols: the loaders of
# set.toml and probes.toml check their lists with this module, so it imports neither.
class Configured(Protocol):
    """A planted set (judges.sets.planted.PlantedSet): its set.toml."""

    @property
    def config(self) -> SetConfig: ...


class Restricted(Protocol):
    """A probe set (judges.sets.probes.ProbeSet): the versions probes.toml probes."""

    @property
    def versions(self) -> tuple[str, ...] | None: ...


@dataclass(frozen=True)
class Run:
    """One run a judge has, and the versions it covers (None: every version)."""

    name: str  # as in the report: noise, retest, sme, panel, reading_list, probes
    key: str  # where a restriction is written, e.g. "set.toml noise_versions"
    versions: tuple[str, ...] | None

    def covers(self, version: str) -> bool:
        return self.versions is None or version in self.versions

    def lacking(self, version: str) -> str:
        """Why `version` lacks this run, for the report: names the list and the fix."""
        return (
            f"{self.name} ({self.key} leaves {version} out: add it, or remove the key so "
            "the run follows every version)"
        )


def set_runs(config: SetConfig) -> list[Run]:
    """The runs set.toml gives its judge; each configured by its items, labels or switch."""
    runs: list[Run] = []
    if config.noise_items:
        runs.append(Run("noise", f"{SET_FILE} noise_versions", config.noise_versions))
    if config.retest or config.retest_versions is not None:
        runs.append(Run("retest", f"{SET_FILE} retest_versions", config.retest_versions))
    if config.sme_labels:
        runs.append(Run("sme", f"{SET_FILE} sme_versions", config.sme_versions))
    if config.panel is not None:
        runs.append(Run("panel", f"{SET_FILE} [panel] versions", config.panel.versions))
    if config.reading_list:
        key = f"{SET_FILE} reading_list_versions"
        runs.append(Run("reading_list", key, config.reading_list_versions))
    return runs


def judge_runs(planted: Configured, probes: Restricted | None) -> list[Run]:
    """Every run the judge has: set.toml's, then the bias probes of probes.toml."""
    runs = set_runs(planted.config)
    if probes is not None:
        runs.append(Run("probes", f"{PROBES_FILE} versions", probes.versions))
    return runs


def run_versions(run: Run | None, versions: tuple[str, ...]) -> tuple[str, ...]:
    """The judge's versions (oldest first) this run covers; none for a run it lacks."""
    if run is None:
        return ()
    return tuple(v for v in versions if run.covers(v))


def find_run(planted: Configured, name: str) -> Run | None:
    return next((run for run in set_runs(planted.config) if run.name == name), None)


def lacking_runs(planted: Configured, probes: Restricted | None, version: str) -> list[str]:
    """The runs the judge has that a list keeps from `version`, each with its fix."""
    return [run.lacking(version) for run in judge_runs(planted, probes) if not run.covers(version)]


def check_versions(path: Path, runs: list[Run], versions: tuple[str, ...]) -> None:
    """A restriction names prompt versions of the judge, and at least one."""
    for run in runs:
        if run.versions is None:
            continue
        key = run.key.split(" ", 1)[1]
        if not run.versions:
            raise PlantedSetError(
                f"{path}: {key} = [] gives the {run.name} run no version; name versions, "
                "or remove the key so the run follows every version"
            )
        strange = sorted(set(run.versions) - set(versions))
        if strange:
            raise PlantedSetError(
                f"{path}: {key} names {strange}, which are not prompt versions "
                f"({', '.join(versions)}); name one of them or remove the key"
            )
