"""A labelled benchmark's leaderboard in words: the terminal's table, from
`judges.stats.fitness.benchmark_board`, and its published figures beside those recomputed.

Every board names the benchmark's licence as recorded ("unknown" when none was given) and
its source; the overall row says how it weighs the subsets.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from judges.reports.format import p_value
from judges.reports.sections.pairwise import finding
from judges.sets.benchmark import Benchmark, Manifest
from judges.stats.estimates.intervals import McNemar
from judges.stats.fitness.benchmark import PublishedMatch
from judges.stats.fitness.benchmark_board import Board, Entry

HEAD = (
    "#",
    "judge",
    "rule",
    "figure [95% CI]",
    "pairs",
    "ties",
    "unparsed",
    "inconsistent",
    "P(first) picks",
    "p",
    "P(longer) judge/gold",
    "p",
    "score~length",
    "chance",
    "vs next p",
)

WEIGHTING = {
    "items": "every pair alike",
    "subsets": "the mean of the subsets' figures",
    "weights": "the benchmark's subset weights",
}

LEGEND = (
    "  figure: each judge's own rule (benchmark.toml); [95% CI]: Wilson over pairs when "
    "every pair scores 0 or 1, else bootstrap over pairs; none for a figure weighted by "
    "subsets.",
    "  ties, unparsed: verdicts (judgements); inconsistent: pairs whose two parsed verdicts "
    "differ. P(first) and P(longer) count real picks only (A or B; a tie or an unparsed "
    "reply is no pick); p: exact sign tests, two-sided.",
    "  score~length: Spearman's rho of each response's score with its length (judges that "
    "give scores). chance: pairs where every pick was right against every pick wrong, "
    "one-sided at 0.5. vs next: sign test on the pairs both judged.",
)


def _short_p(test: McNemar) -> str:
    return "no test" if test.n == 0 else p_value(test.p_value)


def _figure(e: Entry) -> str:
    value = f"{100 * float(e.score.value):.2f}%"
    if not math.isnan(e.low):
        value += f" [{100 * e.low:.1f}, {100 * e.high:.1f}]"
    if e.score.binary:
        value += f" ({e.score.right}/{e.score.pairs})"
    return value


def _length(e: Entry) -> tuple[str, str]:
    bias = e.length
    if bias.longer.n == 0 or bias.gold.n == 0:
        return "-", "-"
    return f"{100 * bias.longer.rate:.1f}%/{100 * bias.gold.rate:.1f}%", _short_p(bias.test)


def _rho(e: Entry) -> str:
    bias = e.length
    if bias.rho is None:
        return "-"
    if math.isnan(bias.rho):
        return f"undefined ({bias.scored} scores)"
    p = math.nan if bias.rho_p is None else bias.rho_p
    return f"{bias.rho:.3f} (p {p_value(p)}, {bias.scored} scores)"


def cells(board: Board) -> list[list[str]]:
    out = []
    for rank, e in enumerate(board.entries, start=1):
        after = board.neighbours[rank - 1] if rank - 1 < len(board.neighbours) else None
        position = e.position
        out.append(
            [
                str(rank),
                e.judge,
                e.rule,
                _figure(e),
                str(e.score.pairs),
                str(e.ties),
                str(e.unparsed),
                "-" if e.inconsistent is None else str(e.inconsistent),
                "-" if position is None or position.first.n == 0
                else f"{100 * position.first.rate:.1f}% of {position.first.n}",
                "-" if position is None else _short_p(position.test),
                *_length(e),
                _rho(e),
                f"{finding(e.chance)} ({e.chance.k}/{e.chance.n})",
                "-" if after is None else _short_p(after),
            ]
        )  # fmt: skip
    return out


def title(board: Board) -> str:
    where = "overall" if board.subset is None else board.subset
    judges = len(board.entries)
    return f"{board.benchmark}, {where} ({board.items} items, {judges} judge{'s' * (judges != 1)})"


def header(manifest: Manifest) -> list[str]:
    """The benchmark's provenance and rules, above its boards."""
    rules = sorted({manifest.rule_of(j) for j in manifest.judges} | {manifest.rule})
    return [
        f"benchmark {manifest.name}: source {manifest.source}; licence: {manifest.licence}",
        f"  rule {manifest.rule} (judges' own: {', '.join(rules)}); overall: "
        f"{WEIGHTING[manifest.overall.weighting]}",
    ]


def board_text(board: Board) -> list[str]:
    rows = [list(HEAD), *cells(board)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEAD))]
    table = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
             for row in rows]  # fmt: skip
    return [f"{title(board)}, ranked by figure:", *table]


def benchmark_text(benchmark: Benchmark, boards: Sequence[Board]) -> list[str]:
    """The terminal's leaderboard of one benchmark: overall first, then each subset."""
    ordered = [b for b in boards if b.subset is None] + [b for b in boards if b.subset]
    lines = header(benchmark.manifest)
    for board in ordered:
        lines += ["", *board_text(board)]
    return [*lines, "", *LEGEND]


def published_lines(matches: Sequence[PublishedMatch]) -> list[str]:
    """Each published figure beside the one recomputed, rounded as published."""
    lines = []
    for m in matches:
        p = m.published
        where = p.subset or "overall"
        got = "not judged" if m.shown is None else str(m.shown)
        mark = "equal" if m.equal else "DIFFERS"
        unit = "%" if p.scale == "percent" else ""
        lines.append(
            f"  {p.judge}, {where}, {p.rule}: published {p.value!r}{unit}, recomputed "
            f"{got}{unit}: {mark}"
        )
    return lines
