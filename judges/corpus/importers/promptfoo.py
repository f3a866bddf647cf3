"""promptfoo's eval output (`promptfoo eval --output results.json`, or `results.jsonl`) read
into the corpus format, from its JSON directly: the file is promptfoo's documented export.

Each entry of `results.results` (each line of the JSONL) is one test case run on one prompt
by one provider, graded by the test's assertions (`gradingResult.componentResults`). The
mapping:

    system    the provider (`provider.id`, or its label); with several prompts, the
              provider and the prompt's label (`provider | prompt`); --system prompt: the
              prompt alone
    item      the test: `test-<testIdx>`, its `vars` the item's inputs; `--repeat N` copies
              a test under new indexes with the same vars (and description), so those are
              one item, the copies its runs 1, 2, ... in index order
    judge     each assertion: its `metric` when it names one, else its `type` (javascript,
              llm-rubric, ...); a name the test repeats is numbered (`llm-rubric#2`)
    score     the component's score; its `pass` false is the judge's flag
    label     a component whose `assertion.type` is "human" (a rating given in promptfoo's
              viewer): its score, or pass 1 / fail 0

A result without a grading (a provider error) is an error row for each of its test's
assertions, with promptfoo's error as the reason; a component without a score or pass is an
error row too. Results the file holds that name no test are counted and named.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from judges.corpus.importers.corpus_writer import NO_SCORE, ImportedRows, score_of
from judges.corpus.manifest import CorpusError
from judges.storage.files import json_lines, read_json

HUMAN = "human"
SYSTEM_FROM = ("provider", "prompt")


def _provider(result: dict[str, Any]) -> str:
    provider = result.get("provider")
    if isinstance(provider, dict):
        return str(provider.get("label") or provider.get("id") or "")
    return str(provider or "")


def _prompt(result: dict[str, Any]) -> str:
    prompt = result.get("prompt")
    if isinstance(prompt, dict):
        return str(prompt.get("label") or prompt.get("raw") or "")
    return str(prompt or "")


def _components(result: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(judge name, component) of a result's grading, a repeated name numbered."""
    grading = result.get("gradingResult")
    components = (grading or {}).get("componentResults") or []
    named: list[tuple[str, dict[str, Any]]] = []
    seen: Counter[str] = Counter()
    for component in components:
        if not isinstance(component, dict):
            continue
        assertion = component.get("assertion") or {}
        name = str(assertion.get("metric") or assertion.get("type") or "assertion")
        seen[name] += 1
        named.append((name if seen[name] == 1 else f"{name}#{seen[name]}", component))
    return named


def _score(component: dict[str, Any]) -> tuple[float | None, str | None]:
    """The component's score, else its pass as 1 or 0, by every reader's rule."""
    score = component.get("score")
    if score is None and isinstance(component.get("pass"), bool):
        return float(component["pass"]), None
    found, why = score_of(score)
    return found, ("no score nor pass in the log" if why == NO_SCORE else why)


def _output(result: dict[str, Any]) -> str | None:
    output = (result.get("response") or {}).get("output")
    if output is None:
        return None
    return output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)


def _tests(results: list[Any]) -> dict[int, tuple[str, int]]:
    """testIdx -> (item, run): the indexes of one test's repeats (the same vars and
    description) are one item, `test-<first index>`, and runs 0, 1, ... in index order."""
    copies: dict[str, list[int]] = defaultdict(list)
    for result in results:
        if isinstance(result, dict) and isinstance(result.get("testIdx"), int):
            case = result.get("testCase") or {}
            key = json.dumps([result.get("vars"), case.get("description")], sort_keys=True,
                             default=str)  # fmt: skip
            if result["testIdx"] not in copies[key]:
                copies[key].append(result["testIdx"])
    found = {}
    for indexes in copies.values():
        ordered = sorted(indexes)
        for run, index in enumerate(ordered):
            found[index] = (f"test-{ordered[0]}", run)
    return found


def _results(path: Path) -> tuple[str, list[tuple[str, Any]]]:
    """(the eval's id, every result with where it is): `--output results.json` holds them in
    `results.results`; `--output results.jsonl` writes one result per line, nothing else."""
    if path.suffix.lower() == ".jsonl":
        found = [(f"{path}:{line}", result) for line, result in json_lines(path, CorpusError)]
        if not any(isinstance(r, dict) and "testIdx" in r for _, r in found):
            raise CorpusError(
                f"{path}: no line is a promptfoo result (an object with a testIdx); not the "
                "JSONL `promptfoo eval --output results.jsonl` writes, one result per line"
            )
        ids = {r.get("evalId") for _, r in found if isinstance(r, dict) and r.get("evalId")}
        return (str(next(iter(ids))) if len(ids) == 1 else path.stem), found
    data = read_json(path, CorpusError)
    results = ((data or {}).get("results") or {}).get("results") if isinstance(data, dict) else None
    if not isinstance(results, list):
        raise CorpusError(
            f"{path}: no results.results list; not the JSON `promptfoo eval --output "
            "results.json` writes (a .csv, .html or .yaml export holds less; export JSON, "
            "or JSONL: --output results.jsonl)"
        )
    where = [(f"{path}: results.results[{index}]", r) for index, r in enumerate(results)]
    return str(data.get("evalId") or path.stem), where


def read_promptfoo(path: Path, system_from: str = "provider") -> ImportedRows:
    """The judgements and human ratings of one promptfoo output file (.json or .jsonl)."""
    if not path.is_file():
        raise CorpusError(f"{path}: no such file; give the file `promptfoo eval --output` wrote")
    eval_id, placed = _results(path)
    results = [r for _, r in placed]
    rows = ImportedRows(description=f"promptfoo eval {eval_id}", source=path.name)
    prompts = {_prompt(r) for r in results if isinstance(r, dict)}
    tests = _tests(results)
    judges_of: dict[int, dict[str, None]] = defaultdict(dict)
    for result in results:
        if isinstance(result, dict) and isinstance(result.get("testIdx"), int):
            for name, component in _components(result):
                if (component.get("assertion") or {}).get("type") != HUMAN:
                    judges_of[result["testIdx"]][name] = None
    for where, result in placed:
        if not isinstance(result, dict) or not isinstance(result.get("testIdx"), int):
            rows.unmapped["results with no testIdx (no test to file them under)"] += 1
            continue
        test = result["testIdx"]
        provider, prompt = _provider(result), _prompt(result)
        if system_from == "prompt":
            system = prompt
        else:
            system = provider if len(prompts) <= 1 else f"{provider} | {prompt}"
        item, run = tests[test]
        rows.item(item, dict(result.get("vars") or {}))
        output = _output(result)
        if output is not None and run == 0:
            rows.outputs.setdefault((system, item), {"system": system, "item": item,
                                                     "output": output})  # fmt: skip
        graded = dict(_components(result))
        for name in judges_of[test]:
            rows.judge(name, f"promptfoo assertion {name}")
            row: dict[str, Any] = {"system": system, "item": item, "judge": name}
            if run:
                row["run"] = run
            found = graded.get(name)
            if found is None:
                error = result.get("error") or "no grading of this assertion in the log"
                row["error"] = " ".join(str(error).split())[:300]
            else:
                score, why = _score(found)
                if score is None:
                    row["error"] = str(why)
                else:
                    row["score"] = score
                    if isinstance(found.get("pass"), bool):
                        row["flagged"] = not found["pass"]
            rows.judgements.append((f"{where} assertion {name!r}", row))
        for name, component in graded.items():
            if (component.get("assertion") or {}).get("type") != HUMAN:
                continue
            score, why = _score(component)
            if score is None:
                rows.unmapped[f"human ratings with {why}"] += 1
            else:
                rows.labels.append((f"{where} {name!r}",
                                    {"system": system, "item": item, "score": score}))  # fmt: skip
    return rows
