"""The "Leaderboard" section: per set, every judge model ranked by agreement with the gold
label, with its position, length and list biases, parsed replies, price and time, and the
exact test against the model ranked next (`judges.stats.fitness.leaderboard`).

The same cells make report.md's table, index.html's and the terminal's
(`python -m judges leaderboard`), so the three never disagree.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from judges.core.quoting import md_prose
from judges.reports.format import p_is, p_value, rate_percent_short
from judges.reports.sections.prose import inline_html
from judges.stats.estimates.intervals import McNemar, Rate
from judges.stats.fitness.evaluator import EvaluatorFigures, Preference
from judges.stats.fitness.leaderboard import SetLeaderboard

HEAD = (
    "#",
    "model",
    "agreement",
    "P(first shown)",
    "P(longer) judge vs gold",
    "P(list) judge vs gold",
    "parsed",
    "USD / 1,000",
    "time / 1,000",
    "vs next",
)

EXPLAINED = (
    "Every model that judged the set, ranked by **agreement**: the share of judgements "
    "(each item in both orders) naming the gold winner, LLMBar's `correct_average`, with a "
    "95% bootstrap interval over items. **P(first shown)**: judgements naming the output "
    "shown first, of those naming one (Wilson interval); tested against 0.5 by the items "
    "where the first shown won both times against those where the second shown did (exact, "
    "two-sided). **P(longer)**: on items whose outputs differ in length, judgements "
    "preferring the longer output, beside the share of items whose gold winner is the "
    "longer; tested by the items where the judge leans to the longer output more than the "
    "gold label against less (exact sign test, two-sided). **P(list)**: the same for the "
    "output that alone has a list (two or more bulleted or numbered lines). **parsed**: "
    "judgements that named a winner. **USD and time per 1,000 judgements**: from recorded "
    "usage; unknown for imported outputs (a release publishes neither), and time is not "
    "kept in cassettes. **vs next**: exact McNemar (sign) test against the model ranked "
    "just below, on the items both judged: items where this model's agreement (0, 1/2 or "
    "1) is higher against lower, two-sided; a large p means the order of the two is not "
    "established."
)


def p_text(p: float) -> str:
    return p_is(p)


def _pct(rate: Rate) -> str:
    return rate_percent_short(rate, empty="none judged")


def _agreement(f: EvaluatorFigures) -> str:
    a = f.agreement
    if f.items == 0:
        return "no items"
    interval = (
        f" [{100 * a.low:.1f}, {100 * a.high:.1f}]"
        if not (math.isnan(a.low) or math.isnan(a.high))
        else " (one item: no interval)"
    )
    return f"{100 * a.value:.1f}%{interval} ({f.right}/{2 * f.items} judgements, {f.items} items)"


def _test(test: McNemar, more: str, less: str) -> str:
    if test.n == 0:
        return "no item to test"
    return f"{more} {test.b} vs {less} {test.c} items, {p_text(test.p_value)} (two-sided)"


def _position(f: EvaluatorFigures) -> str:
    test = f.position.test
    return f"{_pct(f.position.first)}; " + _test(test, "first twice", "second twice")


def _preference(pref: Preference | None) -> str:
    if pref is None:
        return "no item has a list in one output only"
    if pref.judge.n == 0:
        return f"no judgement on the {pref.gold.n} items"
    return (
        f"{100 * pref.judge.rate:.1f}% [{100 * pref.judge.low:.0f}, {100 * pref.judge.high:.0f}] "
        f"of {pref.judge.n} vs {100 * pref.gold.rate:.1f}% of {pref.gold.n} items; "
        + _test(pref.test, "more", "less")
    )


def _money(f: EvaluatorFigures) -> str:
    s = f.spend  # the cell says "unknown" or "not recorded"; why is said under the table
    return f"${s.usd_per_1000:.4f}" if s.usd_per_1000 is not None else s.cost_unknown.split(":")[0]


def _time(f: EvaluatorFigures) -> str:
    s = f.spend
    if s.seconds_per_1000 is not None:
        return f"{s.seconds_per_1000:.1f} s"
    return s.time_unknown.split(":")[0]


def unknown_lines(board: SetLeaderboard) -> list[str]:
    """Why a price or time is unknown, once per reason."""
    costs = sorted({f.spend.cost_unknown for f in board.entries if f.spend.cost_unknown})
    times = sorted({f.spend.time_unknown for f in board.entries if f.spend.time_unknown})
    return [*(f"USD: {why}" for why in costs), *(f"time: {why}" for why in times)]


def cells(board: SetLeaderboard) -> list[list[str]]:
    """One row of text cells per ranked model, in HEAD's order."""
    out = []
    for rank, f in enumerate(board.entries, start=1):
        after = board.neighbours[rank - 1] if rank - 1 < len(board.neighbours) else None
        versus = (
            f"vs #{rank + 1} {after.lower}: " + _test(after.test, "better on", "worse on")
            if after is not None
            else "-"
        )
        out.append(
            [
                str(rank),
                f.model,
                _agreement(f),
                _position(f),
                _preference(f.length),
                _preference(f.lists),
                _pct(f.parsed),
                _money(f),
                _time(f),
                versus,
            ]
        )
    return out


def _title(board: SetLeaderboard) -> str:
    n = max((f.items for f in board.entries), default=0)
    models = len(board.entries)
    return f"{board.category} ({n} items, {models} model{'s' * (models != 1)})"


def _md_cell(text: str) -> str:
    """A cell of the harness's words around a model's name, which may hold markup."""
    return md_prose(text).replace("|", "\\|")


def leaderboard_markdown(boards: Sequence[SetLeaderboard]) -> list[str]:
    if not boards:
        return []
    lines = ["## Leaderboard: which judge model to choose", "", EXPLAINED, ""]
    for board in boards:
        lines += [
            f"### Leaderboard, {_title(board)}",
            "",
            "| " + " | ".join(HEAD) + " |",
            "|" + "---|" * len(HEAD),
            *("| " + " | ".join(_md_cell(cell) for cell in row) + " |" for row in cells(board)),
            "",
            *(f"- {md_prose(line)}" for line in unknown_lines(board)),
            *([""] if unknown_lines(board) else []),
        ]
    return lines


def leaderboard_html(boards: Sequence[SetLeaderboard]) -> str:
    if not boards:
        return ""
    head = "".join(f"<th>{escape(h)}</th>" for h in HEAD)
    tables = "".join(
        f"<h3>{escape(_title(board))}</h3><table><tr>{head}</tr>"
        + "".join(
            "<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>"
            for row in cells(board)
        )
        + "</table>"
        + "".join(f'<p class="caption">{escape(line)}</p>' for line in unknown_lines(board))
        for board in boards
    )
    return (
        '<h2>Leaderboard: which judge model to choose</h2><div class="card">'
        f'<p class="caption">{inline_html(EXPLAINED)}</p>{tables}</div>'
    )


SHORT_HEAD = (
    "#",
    "model",
    "agreement [95% CI]",
    "P(first)",
    "p",
    "P(longer) judge/gold",
    "p",
    "P(list) judge/gold",
    "p",
    "parsed",
    "USD/1k",
    "time/1k",
    "vs next p",
)


def _short_p(test: McNemar) -> str:
    """The p-value, or "no test" when no item differs (the last rank's "vs next" is "-")."""
    if test.n == 0:
        return "no test"
    return p_value(test.p_value)


def _short_pref(pref: Preference | None) -> tuple[str, str]:
    if pref is None or pref.judge.n == 0 or pref.gold.n == 0:
        return "-", "-"
    return f"{100 * pref.judge.rate:.1f}%/{100 * pref.gold.rate:.1f}%", _short_p(pref.test)


def short_cells(board: SetLeaderboard) -> list[list[str]]:
    """The terminal's compact cells, in SHORT_HEAD's order (details in report.md)."""
    out = []
    for rank, f in enumerate(board.entries, start=1):
        a = f.agreement
        interval = "" if math.isnan(a.low) else f" [{100 * a.low:.1f}, {100 * a.high:.1f}]"
        first = f.position.first
        after = board.neighbours[rank - 1] if rank - 1 < len(board.neighbours) else None
        out.append(
            [
                str(rank),
                f.model,
                f"{100 * a.value:.1f}%{interval}",
                "-" if first.n == 0 else f"{100 * first.rate:.1f}%",
                _short_p(f.position.test),
                *_short_pref(f.length),
                *_short_pref(f.lists),
                "-" if f.parsed.n == 0 else f"{100 * f.parsed.rate:.1f}%",
                _money(f),
                _time(f),
                "-" if after is None else _short_p(after.test),
            ]
        )
    return out


def leaderboard_text(board: SetLeaderboard, judge: str, version: str) -> list[str]:
    """The terminal's table, aligned, with what each column and test is underneath."""
    rows = [list(SHORT_HEAD), *short_cells(board)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(SHORT_HEAD))]
    table = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
             for row in rows]  # fmt: skip
    return [
        f"{judge} prompt {version}, {_title(board)}, ranked by agreement:",
        *table,
        "  agreement: judgements naming the gold winner (both orders), bootstrap CI over items; "
        "every p exact, two-sided:",
        "  P(first) against 0.5 (first shown won twice vs second shown twice); P(longer) and "
        "P(list) judge against gold (sign test on items); vs next: McNemar against the model "
        "ranked below",
        *(f"  {line}" for line in unknown_lines(board)),
    ]
