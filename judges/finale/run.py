"""Running the finale: promote, judge every slot through the caller's `Call`s, write artifacts.

Judging goes through `judges.core.runner.judge` with a `Call` the caller builds per slot (so
the caller decides record, replay and cassettes); spend goes through a `Ledger` whose cap turns
every later judgement into a `cost_cap` row. A capped run still writes every artifact.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from judges.calls.ledger import Ledger
from judges.core.results import JudgementRow
from judges.core.runner import Subject, judge
from judges.core.spec import JudgeSpec
from judges.finale.config import CROSS, PRIMARY, Candidate, Episode, FinaleConfig, FinaleError
from judges.finale.formats import dump_json
from judges.finale.markdown import render_markdown
from judges.finale.plan import (
    FINALISTS_FILE,
    LEDGER_FILE,
    REPORT_JSON,
    REPORT_MD,
    CallSlot,
    JudgeCallFactory,
    cross_sampling,
    judge_of,
    judging_plan,
    write_promotion,
)
from judges.finale.promotion import Finalist, Promotion, promote_finalists
from judges.finale.report import build_report, finalist_rows, run_metadata
from judges.storage.files import atomic_write_text

__all__ = ["FinaleResult", "run_finale"]


@dataclass(frozen=True)
class FinaleResult:
    promotion: Promotion
    rows: tuple[JudgementRow, ...]
    report: dict[str, Any]
    paths: dict[str, Path]

    @property
    def complete(self) -> bool:
        return bool(self.report["complete"])


def run_finale(
    config: FinaleConfig,
    candidates: Sequence[Candidate],
    episodes: Sequence[Episode],
    *,
    judge_call_factory: JudgeCallFactory,
    out_dir: Path,
    catalog: Mapping[str, JudgeSpec] | None = None,
    progress: Callable[[str], None] | None = None,
    source: str = "judges.finale.run.run_finale",
) -> FinaleResult:
    """Promote, write promotion.json, judge every slot, then write the other artifacts.

    Primary judgements come first (finalists by global rank, episodes in file order), then
    the cross-check, so a cost cap leaves the cross-check incomplete before the primary.
    """
    started = time.perf_counter()
    spec, version = judge_of(config, catalog)
    promotion = promote_finalists(candidates, config)
    plan = judging_plan(promotion, episodes, config, catalog={spec.name: spec})
    paths = {"promotion": write_promotion(out_dir, promotion, plan)}
    by_run = _check_inputs(promotion, candidates, episodes, spec)
    _check_cross_differs(spec, config)
    ledger_path = out_dir / LEDGER_FILE
    ledger_path.unlink(missing_ok=True)
    ledger = Ledger(ledger_path, config.cost_cap_usd)

    slots = _slots(promotion, episodes, config, spec, by_run, ledger)
    judged = _judge_slots(slots, spec, version, judge_call_factory, out_dir, progress)
    paths["finalists"] = out_dir / FINALISTS_FILE

    report = build_report(config, spec, version, promotion, plan, episodes, judged)
    report["run_metadata"] = run_metadata(source, judged, time.perf_counter() - started, ledger)
    paths["report_json"] = out_dir / REPORT_JSON
    atomic_write_text(paths["report_json"], dump_json(report))
    paths["report_md"] = out_dir / REPORT_MD
    atomic_write_text(paths["report_md"], render_markdown(report))
    return FinaleResult(promotion, tuple(row for _, row in judged), report, paths)


def _subject(finalist: Finalist, episode: Episode, candidate: Candidate) -> Subject:
    return Subject(
        item_id=f"{finalist.run}/{episode.episode_id}",
        category=finalist.stratum,
        control=False,
        inputs={
            "transcript": episode.transcript,
            "summary": candidate.summaries[episode.episode_id],
        },
    )


def _check_inputs(
    promotion: Promotion,
    candidates: Sequence[Candidate],
    episodes: Sequence[Episode],
    spec: JudgeSpec,
) -> dict[str, Candidate]:
    by_run = {c.run: c for c in candidates}
    missing = [
        f"{f.run}/{e.episode_id}"
        for f in promotion.finalists
        for e in episodes
        if e.episode_id not in by_run[f.run].summaries
    ]
    if missing:
        raise FinaleError(
            f"finalists lack a summary (predictions.jsonl) for {len(missing)} episode(s): "
            f"{', '.join(missing[:8])}{' ...' if len(missing) > 8 else ''}"
        )
    for f in promotion.finalists:
        for e in episodes:
            try:
                spec.parse_inputs(_subject(f, e, by_run[f.run]).inputs)
            except ValidationError as error:
                raise FinaleError(
                    f"{f.run}/{e.episode_id}: not a {spec.name} input: {error}"
                ) from None
    return by_run


def _check_cross_differs(spec: JudgeSpec, config: FinaleConfig) -> None:
    if config.cross == config.primary and cross_sampling(spec, config) == spec.config.sampling:
        raise FinaleError(
            f"the cross-check ({config.cross}, T={config.cross_temperature}) is the primary "
            "judge with its own sampling: it would only repeat it; change cross_model or "
            "cross_temperature"
        )


def _slots(
    promotion: Promotion,
    episodes: Sequence[Episode],
    config: FinaleConfig,
    spec: JudgeSpec,
    by_run: Mapping[str, Candidate],
    ledger: Ledger,
) -> list[tuple[CallSlot, Subject]]:
    """Every judgement, primary first (finalists by rank, episodes in file order)."""
    slots: list[tuple[CallSlot, Subject]] = []
    for role, finalists, model, sampling in (
        (PRIMARY, promotion.finalists, config.primary, None),
        (CROSS, promotion.cross_checked, config.cross, cross_sampling(spec, config)),
    ):
        for f in finalists:
            for e in episodes:
                slot = CallSlot(role, model, sampling, f.run, f.stratum, e.episode_id, ledger)
                slots.append((slot, _subject(f, e, by_run[f.run])))
    return slots


def _judge_slots(
    slots: Sequence[tuple[CallSlot, Subject]],
    spec: JudgeSpec,
    version: str,
    factory: JudgeCallFactory,
    out_dir: Path,
    progress: Callable[[str], None] | None,
) -> list[tuple[CallSlot, JudgementRow]]:
    """Judge each slot in order, rewriting finalists.jsonl after every judgement."""
    judged: list[tuple[CallSlot, JudgementRow]] = []
    dims = tuple(spec.config.facets)
    for number, (slot, subject) in enumerate(slots, start=1):
        with factory(slot) as call:
            call.run = slot.role
            call.sampling = slot.sampling
            if call.ledger is None:
                call.ledger = slot.ledger
            row = judge(spec, version, subject, call)
        judged.append((slot, row))
        atomic_write_text(out_dir / FINALISTS_FILE, finalist_rows(judged, dims))
        if progress is not None:
            overall = (row.verdict or {}).get("overall")
            shown = f" overall {overall:.2f}" if isinstance(overall, int | float) else ""
            progress(
                f"[{number}/{len(slots)}] {slot.role:<7} {slot.finalist} "
                f"{slot.episode_id}: {row.status}{shown}"
            )
    return judged
