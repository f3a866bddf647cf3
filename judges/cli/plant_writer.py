"""Model-written candidates through the harness's own recorded path.

Each model-written text is one call of its generator's writer (judges.sets.writing), made
by the judge runner inside a cassette of its own, as a judgement is:

cassettes/planting/<judge>/<generator>/<model>/<prompt version>/<row id>-<hash>.yaml

With `record`, a row whose cassette is missing is asked live (each call reserved against
`--cost-cap` first, as a pytest --record session does); every other is replayed with the
network blocked, so `plant` without --record rebuilds the candidates byte for byte. A server
that cannot be reached stops the command, naming it; a reply that is not usable skips the
row, with the reason, as a deterministic generator that finds nothing to change does.
rubric_level's calls sit one folder deeper, per level (`<generator>/<field>_level_<n>/`);
the second model's checks (`confirm`) under `<judge>/confirm/`, one per candidate text.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from judges.calls.backends import Backend, ModelRef, Price
from judges.calls.cassettes import CassetteMiss, in_cassette, is_replay_miss
from judges.calls.ledger import Ledger
from judges.core.naming import safe_name
from judges.core.results import Expectation, JudgementRow
from judges.core.runner import Call, Subject, judge
from judges.core.spec import JudgeSpec
from judges.sets.candidates import Candidate, Confirmation
from judges.sets.confirming import Checked, confirmer
from judges.sets.generators import Generator, PerturbationError
from judges.sets.source_rows import SourceRow
from judges.sets.writing import Written, context_of, newest_version, writers

PLANTING_CASSETTES = "planting"  # the folder under the project's cassettes/
RUBRIC_LEVEL = "rubric_level"  # the generator that writes for a level (`Aim`)


class WriterStopped(RuntimeError):
    """No later call can succeed (the server is gone, the key refused) or a replay has no
    recording: the message names the server or the cassette, and the fix."""


@dataclass(frozen=True)
class WrittenText:
    """A model-written text and where it came from (a candidate's `written`)."""

    text: str
    change: str
    model: str
    prompt_version: str
    prompt_hash: str
    cassette: str  # relative to the cassettes folder
    # rubric_level: the candidate's own expectation and category, not the set's defects'
    expect: tuple[Expectation, ...] = ()
    category: str | None = None


@dataclass(frozen=True)
class Aim:
    """`--rubric-level FIELD=LEVEL`: the level rubric_level's answers are written for, and
    the judge's instructions that define it."""

    field: str
    level: int
    instructions: str

    @property
    def expect(self) -> tuple[Expectation, ...]:
        return (Expectation(field=self.field, op="==", value=self.level),)

    @property
    def category(self) -> str:
        return f"{self.field.replace('.', '_')}_level_{self.level}"

    def words(self) -> str:
        return (
            f"{self.field} = {self.level}, as the grader's instructions below define it.\n\n"
            f"{self.instructions}"
        )


def cassette_path(
    root: Path, judge_name: str, generator: str, model: ModelRef, version: str, row_id: str
) -> Path:
    """One cassette per (judge, generator, model, prompt version, row); the row id's hash
    keeps two ids that one safe name would merge ("a/b", "a_b") apart."""
    digest = hashlib.sha256(row_id.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return (
        root / safe_name(judge_name) / generator / model.slug / version
        / f"{safe_name(row_id, 60)}-{digest}.yaml"
    )  # fmt: skip


@dataclass
class RecordedWriter:
    """Asks one model, recorded or replayed per call: the writer of the model-written
    candidates, or the second model that checks every candidate (`confirm`)."""

    judge_name: str
    model: ModelRef
    backend: Backend
    price: Price
    cassettes: Path
    record: bool
    base_url: str | None
    ledger: Ledger | None = None
    timeout_s: float = 120.0
    aim: Aim | None = None  # rubric_level's level (--rubric-level)
    live_calls: int = 0
    capped: int = 0  # calls the cost cap stopped
    # candidate id -> why the second model's check could not be made
    unconfirmed: dict[str, str] = field(default_factory=dict)

    def _ask(self, spec: JudgeSpec, subject: Subject, path: Path, what: str) -> JudgementRow:
        """One call inside its cassette: recorded when missing (with --record), else
        replayed. A missing recording or a server no call gets past stops the command."""
        version = newest_version(spec)
        live = self.record and not path.is_file()
        call = Call(
            backend=self.backend, price=self.price, live=live, ledger=self.ledger if live else None,
            is_fatal=is_replay_miss, run="plant", timeout_s=self.timeout_s,
        )  # fmt: skip
        try:
            with in_cassette(path, self.model, record=live):
                result = judge(spec, version, subject, call)
        except CassetteMiss as miss:
            raise WriterStopped(
                f"{what}: the cassette {path}: {miss.reason(self.model)}; record it with the "
                "same command and --record"
            ) from None
        self.live_calls += live and result.status != "cost_cap"
        if result.status == "cost_cap":
            self.capped += 1
        elif result.error_kind is not None:  # unreachable, unauthorised, no route
            where = self.base_url or "the embedded judge"
            raise WriterStopped(
                f"the model {self.model} at {where} cannot be used ({result.error}); start "
                "it or pass another --judge-base-url, then run this again: the calls already "
                "recorded are replayed"
            )
        return result

    def write(
        self, generator: Generator, row: SourceRow, text_field: str, seed: int
    ) -> WrittenText:
        spec = writers()[generator.name]
        version = newest_version(spec)
        aim = self.aim if generator.name == RUBRIC_LEVEL else None
        if generator.name == RUBRIC_LEVEL and aim is None:
            raise ValueError("rubric_level writes for a level: give the writer its aim")
        # Each level its own folder: a recording for one level never answers another.
        folder = generator.name if aim is None else f"{generator.name}/{aim.category}"
        path = cassette_path(self.cassettes, self.judge_name, folder, self.model, version, row.id)
        inputs = {"text": row.inputs[text_field], "context": context_of(row.inputs, text_field)}
        subject = Subject(
            row.id, generator.category, False, inputs | ({"aim": aim.words()} if aim else {})
        )
        result = self._ask(spec, subject, path, f"{generator.name} on row {row.id!r} "
                           f"(line {row.line})")  # fmt: skip
        if result.status == "cost_cap":
            raise PerturbationError("stopped by the cost cap (--cost-cap), nothing recorded")
        if result.status != "ok" or result.verdict is None:
            raise PerturbationError(f"the model's reply was not usable ({result.status})")
        written = Written.model_validate(result.verdict)
        return WrittenText(
            text=written.text,
            change=written.change,
            model=str(self.model),
            prompt_version=version,
            prompt_hash=result.prompt_hash,
            cassette=path.relative_to(self.cassettes).as_posix(),
            expect=aim.expect if aim else (),
            category=aim.category if aim else None,
        )

    def confirm(self, candidate: Candidate) -> Candidate:
        """The candidate with the second model's check (`confirmed`); as it was when the
        check could not be made (the cost cap, an unusable reply: `unconfirmed` says why)."""
        spec = confirmer()
        version = newest_version(spec)
        edited = candidate.field
        original, text = candidate.source.inputs[edited], candidate.inputs[edited]
        key = f"{candidate.id}\0{text}"
        path = cassette_path(self.cassettes, self.judge_name, "confirm", self.model, version, key)
        subject = Subject(candidate.id, candidate.category, False, {
            "original": original, "candidate": text,
            "context": context_of(candidate.source.inputs, edited),
        })  # fmt: skip
        result = self._ask(spec, subject, path, f"the check of candidate {candidate.id!r}")
        if result.status != "ok" or result.verdict is None:
            self.unconfirmed[candidate.id] = result.status
            return candidate
        checked = Checked.model_validate(result.verdict)
        return candidate.model_copy(update={"confirmed": Confirmation(
            model=str(self.model), prompt_version=version, differs=checked.differs,
            agrees=checked.differs == (candidate.kind == "defect"), reason=checked.reason,
        )})  # fmt: skip
