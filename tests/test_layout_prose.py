"""`judges/stats/` is numbers in, numbers out: it builds no prose for readers.

Words a reader sees (reasons, sentences, tables, figures with their p-values) are written in
`judges/reports/` (formats in `reports/format.py`, verdict words in `verdicts/vocabulary.py`),
so one figure reads the same in every format. Two rules, read with `ast` (nothing imported):

- no module of stats defines a function or method named like a prose builder (`sentence`,
  `figure`, `reasons`, `describe*`, `markdown*`, `render*`), except those in
  `PROSE_BUILDERS_LEFT`, each with why it is still there;
- no module of stats holds more f-strings outside a `raise` statement than `FSTRINGS_LEFT`
  allows it (a ratchet: what is left of the prose, each count lowered as prose moves out;
  an error message is not prose for a report, so `raise` does not count).

Kept out of tests/test_layout.py, which holds the import rules, so each file stays short;
each rule is shown to fail on a planted package, like those.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

import judges

ROOT = Path(judges.__file__).resolve().parent
PROSE_BUILDER = re.compile(r"^(sentence|figure|reasons|describe\w*|markdown\w*|render\w*)$")

# Prose builders still in stats: module:qualified name -> why it stays for now.
PROSE_BUILDERS_LEFT: Mapping[str, str] = {
    # The gates' one-line descriptions are the assertion messages of the fixtures, the
    # baseline command and the probe tests, which other parts of issue 44 rewrite onto the
    # verdicts layer; they move to reports/ with those callers.
    "judges.stats.estimates.floors:Gate.describe": "assertion messages (fixtures, baseline)",
    "judges.stats.regression.gates:Regression.describe": "assertion messages (fixtures, baseline)",
    "judges.stats.estimates.power:Power.describe": "part of Regression.describe",
    # The basis a category's power was computed from is a field of report.json.
    "judges.stats.planning.categories:Discordance.describe": "CategoryPower.basis (data)",
    # The probe tests' assertion message; the probe registry rewrite owns that module.
}

# f-strings outside a raise, per module of stats: at most this many. Mostly the `why` and
# `basis` of gates (report.json fields), test names (`planted detection: cousin`) and the
# details of chance tests (`defects flagged 12/20`). Lower a count when prose moves out.
FSTRINGS_LEFT: Mapping[str, int] = {
    "judges.stats.estimates.floors": 8,  # Gate.describe, value_text, threshold_text
    "judges.stats.estimates.intervals": 4,  # Rate, Estimate and McNemar __str__
    "judges.stats.estimates.pairing": 5,  # exclusion reasons (report.json)
    "judges.stats.estimates.power": 3,  # Power.describe
    "judges.stats.fitness.chance": 3,  # the tests' details
    "judges.stats.fitness.judge": 11,  # chance-test names and their details
    "judges.stats.fitness.pairwise": 3,  # LLMBar's published percent strings, a detail
    "judges.stats.fitness.permutation": 7,  # the tests' details
    "judges.stats.planning.categories": 4,  # the power bases (report.json)
    # `plan`'s lines; the scale of a score drop (its own 0-3, or the range given) added two:
    # the next to move, with the rest of `plan`'s words, to the reports layer.
    "judges.stats.planning.set_sizes": 16,
    "judges.stats.planning.simulation": 1,  # the simulation's table row
    "judges.stats.ranking.reading_list": 1,  # the reading list's summary sentence
    "judges.stats.regression.family": 1,  # the Holm note on a gate's why
    "judges.stats.regression.gates": 18,  # every regression gate's why, and describe
    "judges.stats.regression.reference": 3,  # the why against the baseline's retest
    "judges.stats.regression.stability": 4,  # the retest-agreement gate's why, as gates'
    "judges.stats.reliability.gates": 6,  # gate names (`min_kappa.overall`)
    "judges.stats.reliability.label_stability": 4,  # gate and label names
    "judges.stats.reliability.probes": 1,  # an outcome's error (baseline quotes it)
}


def _modules(root: Path, package: str) -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        parts = parts[:-1] if parts[-1] == "__init__" else parts
        yield ".".join((package, *parts)), ast.parse(path.read_text(encoding="utf-8"))


def _defs(body: list[ast.stmt], prefix: str = "") -> Iterator[str]:
    """Qualified names of the functions and methods defined in a body (nested too)."""
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            name = f"{prefix}{node.name}"
            if not isinstance(node, ast.ClassDef):
                yield name
            yield from _defs(node.body, f"{name}.")


def prose_builders(root: Path, package: str) -> dict[str, int]:
    """module:name of every prose-builder def; module -> its f-strings outside a raise."""
    found: dict[str, int] = {}
    for module, tree in _modules(root, package):
        for name in _defs(tree.body):
            if PROSE_BUILDER.match(name.rsplit(".", 1)[-1]):
                found[f"{module}:{name}"] = 1
        # Not counted: f-strings in a raise, and the format spec of a field (`{x:.2f}` is an
        # f-string inside the f-string, to ast).
        skipped = {
            id(sub)
            for node in ast.walk(tree)
            if isinstance(node, ast.Raise)
            for sub in ast.walk(node)
        } | {
            id(node.format_spec)
            for node in ast.walk(tree)
            if isinstance(node, ast.FormattedValue) and node.format_spec is not None
        }
        count = sum(
            isinstance(node, ast.JoinedStr) and id(node) not in skipped for node in ast.walk(tree)
        )
        if count:
            found[module] = count
    return found


def prose_problems(
    found: Mapping[str, int], builders_left: Mapping[str, str], fstrings_left: Mapping[str, int]
) -> list[str]:
    problems = []
    for name, count in sorted(found.items()):
        if ":" in name and name not in builders_left:
            problems.append(f"{name} builds prose: move it to judges/reports/")
        elif ":" not in name and count > fstrings_left.get(name, 0):
            problems.append(
                f"{name}: {count} f-strings outside a raise (at most "
                f"{fstrings_left.get(name, 0)}): write the words in judges/reports/"
            )
    return problems


def stale_entries(
    found: Mapping[str, int], builders_left: Mapping[str, str], fstrings_left: Mapping[str, int]
) -> list[str]:
    stale = [f"{name}: gone, remove it" for name in builders_left if name not in found]
    return stale + [
        f"{name}: {found.get(name, 0)} f-strings now, lower its count from {count}"
        for name, count in fstrings_left.items()
        if found.get(name, 0) < count
    ]


# --------------------------------------------------------------------------- the package


def test_nothing_in_stats_builds_prose_for_readers() -> None:
    found = prose_builders(ROOT / "stats", "judges.stats")
    problems = prose_problems(found, PROSE_BUILDERS_LEFT, FSTRINGS_LEFT)
    assert not problems, "stats is numbers in, numbers out:\n" + "\n".join(problems)


def test_the_prose_allow_lists_are_not_stale() -> None:
    found = prose_builders(ROOT / "stats", "judges.stats")
    assert all(why.strip() for why in PROSE_BUILDERS_LEFT.values())
    stale = stale_entries(found, PROSE_BUILDERS_LEFT, FSTRINGS_LEFT)
    assert not stale, "\n".join(stale)


# --------------------------------------------------------------------------- the rule can fail


def test_a_prose_method_and_an_fstring_planted_in_stats_are_found(tmp_path: Path) -> None:
    stats = tmp_path / "stats"
    stats.mkdir()
    (stats / "__init__.py").write_text("", encoding="utf-8")
    (stats / "rates.py").write_text(
        "class Rate:\n"
        "    def sentence(self):\n"
        "        return f'{self.k}/{self.n} = {self.rate:.2f}'\n"
        "\n"
        "def check(n):\n"
        "    if n < 0:\n"
        "        raise ValueError(f'n must be >= 0, got {n}')\n"
        "    return n\n",
        encoding="utf-8",
    )
    found = prose_builders(stats, "pkg.stats")
    assert found == {"pkg.stats.rates:Rate.sentence": 1, "pkg.stats.rates": 1}
    assert prose_problems(found, {}, {}) == [
        "pkg.stats.rates: 1 f-strings outside a raise (at most 0): write the words in "
        "judges/reports/",
        "pkg.stats.rates:Rate.sentence builds prose: move it to judges/reports/",
    ]
    allowed = {"pkg.stats.rates:Rate.sentence": "planted"}
    assert prose_problems(found, allowed, {"pkg.stats.rates": 1}) == []
    assert stale_entries(found, allowed | {"pkg.stats.gone:f": "x"}, {"pkg.stats.rates": 2}) == [
        "pkg.stats.gone:f: gone, remove it",
        "pkg.stats.rates: 1 f-strings now, lower its count from 2",
    ]
