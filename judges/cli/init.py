"""`python -m judges init NAME`: a working skeleton for a new judge, in the current project.

Writes the judge's prompts folder (`judge.toml`, prompt 1.0), its verdict module, a planted
set with defects and controls and its reliability runs, one test module that pulls in the
harness's generic suite, the pytest ini settings, a `.gitignore` block and a GitHub
workflow. Never overwrites a file: one that exists is left alone and named. The files are
templates in `judges/cli/skeleton/`; docs/your-own-judge.md walks through them.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from judges.calls.backends import LOCAL_DEFAULT_URL, BackendError, ModelRef, backend_of
from judges.calls.local_server import EMBEDDED_MODEL
from judges.cli.harness_source import HarnessSource, harness_source
from judges.cli.project import (
    DEFAULT_PLANTED_SETS,
    PLANTED_SETS_KEY,
    PROMPTS_KEY,
    find_project,
    read_settings,
)
from judges.core.team_judge import TeamJudge, TeamJudgeError
from judges.sets.folder import ITEMS_FILE, SET_FILE, SetFolder

SKELETON = Path(__file__).parent / "skeleton"
DEFAULT_MODEL = "local:smollm2-135m"  # the embedded judge of the `local` extra
PROMPTS_FOLDER = "judge_prompts"
VERDICTS_PACKAGE = "judge_verdicts"
TESTS_FOLDER = "judge_tests"
GITIGNORE_BEGIN = "# judges: begin"
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


class InitError(ValueError):
    """The judge cannot be scaffolded here; the message says why and what to do."""


@dataclass(frozen=True)
class Written:
    """What `init` did: files written, files left alone, and settings to add by hand."""

    written: list[Path]
    kept: list[Path]
    advice: list[str]
    version: str = ""  # a judge function's own version ("" when its module declares none)


def item_prefix(name: str) -> str:
    """The planted items' id prefix: the name's initials, 2 to 4 capitals (SR-001)."""
    initials = "".join(part[0] for part in name.split("_") if part).upper()
    if len(initials) < 2:
        initials = re.sub(r"[^A-Z]", "", name.upper())[:2].ljust(2, "X")
    return initials[:4]


def _template(name: str, values: dict[str, str]) -> str:
    text = (SKELETON / name).read_text(encoding="utf-8")
    for key, value in values.items():
        text = text.replace(key, value)
    return text


def _ini_advice(inifile: Path, prompts: str, planted: str) -> list[str]:
    return [
        f"{inifile} already configures pytest, so it was left alone; add to its pytest section:",
        f"  {PROMPTS_KEY} = {prompts}",
        f"  {PLANTED_SETS_KEY} = {planted}",
        "  pythonpath = .",
        f"  (and {TESTS_FOLDER} to testpaths, if it sets testpaths)",
    ]


def scaffold(
    root: Path,
    name: str,
    model: str,
    harness: HarnessSource | None = None,
    callable_ref: str | None = None,
) -> Written:
    """Write the skeleton of judge `name` under `root`; never overwrite a file.

    `harness`: what the workflow installs (default: where this harness came from).
    `callable_ref`: the team's own judge function ("pkg.module:function"): its judge.toml,
    tests and settings, no prompt, verdict module or example items (their inputs are the
    function's parameters: the advice shows an item line for them).
    """
    if not _NAME.match(name):
        raise InitError(
            f"{name!r} is not a judge name: lower-case letters, digits and _, starting with "
            "a letter (e.g. support_reply)"
        )
    try:
        ModelRef.parse(model)
    except BackendError as error:
        raise InitError(f"--model {model}: {error}") from None
    project = find_project(root)
    settings = read_settings(project.rootdir)
    root = project.rootdir if settings is not None else root.absolute()
    prompts = project.prompts or root / PROMPTS_FOLDER
    planted = project.planted_sets if settings is not None else root / DEFAULT_PLANTED_SETS
    if (prompts / name).exists():
        raise InitError(f"{prompts / name} exists: judge {name!r} is already defined here")
    team = _team_judge(root, callable_ref) if callable_ref is not None else None
    harness = harness or harness_source()
    values = {
        "__JUDGE__": name,
        "__MODEL__": model,
        "__P__": item_prefix(name),
        "__PROMPTS__": prompts.relative_to(root).as_posix(),
        "__PLANTED__": planted.relative_to(root).as_posix(),
        "__HARNESS__": harness.requirement,
        "__CALLABLE__": callable_ref or "",
        "__VERSION__": _version_line(team),
    }
    files: dict[Path, str | None] = {
        prompts / name / "judge.toml": "judge.toml",
        prompts / name / "1.0.md": "prompt.md",
        root / VERDICTS_PACKAGE / "__init__.py": None,
        root / VERDICTS_PACKAGE / f"{name}.py": "verdict.py.tmpl",
        SetFolder(planted, name).items_path: ITEMS_FILE,
        SetFolder(planted, name).config_path: SET_FILE,  # its template is named after it
        root / TESTS_FOLDER / "test_judges.py": "test_judges.py.tmpl",
        root / ".github" / "workflows" / "judges.yml": "workflow.yml",
    }
    advice: list[str] = []
    if team is not None:  # the team's code is the prompt and the verdict module
        for own in ("1.0.md", "__init__.py", f"{name}.py", ITEMS_FILE, SET_FILE):
            files = {path: t for path, t in files.items() if path.name != own}
        files[prompts / name / "judge.toml"] = "judge_callable.toml"
        advice += _items_advice(SetFolder(planted, name).items_path, name, team)
    if settings is None:
        files[root / "pytest.ini"] = "pytest.ini"
    elif PROMPTS_KEY not in settings[1] or "pythonpath" not in settings[1]:
        advice += _ini_advice(settings[0], values["__PROMPTS__"], values["__PLANTED__"])
    written, kept = [], []
    for path, template in files.items():
        if path.exists():
            kept.append(path)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        text = "" if template is None else _template(template, values)
        with path.open("x", encoding="utf-8") as out:  # "x": never replace a file
            out.write(text)
        written.append(path)
    workflow = root / ".github" / "workflows" / "judges.yml"
    if workflow in written and not harness.usable:
        advice.append(
            f"edit {workflow.relative_to(root).as_posix()}: its install step needs the "
            f"harness's repository ({harness.problem}); replace {harness.requirement!r} "
            "with a requirement CI can install, e.g. "
            "'pytest-judges @ git+https://HOST/OWNER/judges@COMMIT'"
        )
    gitignore = root / ".gitignore"
    present = gitignore.read_text(encoding="utf-8") if gitignore.is_file() else ""
    if GITIGNORE_BEGIN in present:
        kept.append(gitignore)
    else:  # appended: the project's own lines stay as they are
        separator = "\n" if present and not present.endswith("\n") else ""
        block = _template("gitignore", values)
        with gitignore.open("a", encoding="utf-8") as out:
            out.write(separator + ("\n" if present else "") + block)
        written.append(gitignore)
    return Written(written, kept, advice, team.version if team is not None else "")


def _team_judge(root: Path, ref: str) -> TeamJudge:
    """The function `--callable` names, imported from the project (as `pythonpath = .`)."""
    added = str(root.absolute()) not in sys.path
    if added:
        sys.path.insert(0, str(root.absolute()))
    try:
        return TeamJudge.load(ref, None, "JUDGE_PROMPT_VERSION", {}, need_version=False)
    except TeamJudgeError as error:
        raise InitError(f"--callable {ref}: {error}") from None
    finally:
        if added:
            sys.path.remove(str(root.absolute()))


def _version_line(team: TeamJudge | None) -> str:
    """judge.toml's version: none when the function's module declares its own."""
    if team is None or team.version:
        return ""
    return (
        "# Your judge's version: a change of what it sends or how it reads a reply is a new\n"
        "# one (or declare JUDGE_PROMPT_VERSION in its module instead).\n"
        'version = "1.0"\n'
    )


def _items_advice(path: Path, name: str, team: TeamJudge) -> list[str]:
    """What to write in the planted set, with a line whose inputs are the parameters."""
    inputs = {parameter: "..." for parameter in team.signature.parameters
              if parameter not in ("self", "args", "kwargs")}  # fmt: skip
    example = {
        "id": f"{item_prefix(name)}-001", "slug": "first-defect", "judge": name,
        "category": "a_defect_kind", "inputs": inputs,
        "expect": [{"field": "FIELD", "op": "<=", "value": 1}],
        "provenance": {"source": "hand"},
    }  # fmt: skip
    return [
        f"write {path}: one planted item per line, defects the judge must mark down and "
        '"control": true items it must not; its inputs are the parameters of '
        f"{team.ref}, its expectations the fields it returns, e.g.",
        f"  {json.dumps(example)}",
    ]


def _init(args: argparse.Namespace) -> int:
    root = Path.cwd()
    if args.callable is not None and args.model is None:
        print(
            "python -m judges init: --callable needs --model BACKEND:MODEL, the model your "
            "function calls (e.g. openai:gpt-4o-mini): it prices the calls and names the "
            "cassette folder",
            file=sys.stderr,
        )
        return 2
    model = args.model or DEFAULT_MODEL
    done = scaffold(root, args.name, model, callable_ref=args.callable)
    for path in done.written:
        print(f"wrote {_shown(path, root)}")
    for path in done.kept:
        print(f"kept {_shown(path, root)} (it exists; not overwritten)")
    for line in done.advice:
        print(line)
    if args.callable is not None:
        print(
            "next: write the planted items, then record with the URL and key your function's "
            "client reads in the environment, and replay:\n"
            "  python -m pytest --record\n"
            "  python -m pytest\n"
            f"  python -m judges baseline {args.name} --accept "
            f"{done.version or '1.0'}\n"
            "  python -m pytest --snapshot-update && python -m pytest\n"
            '(`python -m judges docs your-own-judge`: "Your judge function as it is")'
        )
        return 0
    print(
        f"next: edit the prompt, the verdict module and the planted items, then\n"
        f"  {record_command(model, args.base_url)}\n"
        f"  python -m pytest\n"
        f"  python -m judges baseline {args.name} --accept 1.0\n"
        "  python -m pytest --snapshot-update && python -m pytest\n"
        "(`python -m judges docs your-own-judge` walks through each step)"
    )
    return 0


def record_command(model: str, base_url: str | None) -> str:
    """The command that records the new judge, runnable as printed: a local model other
    than the embedded judge is reached at `base_url` (llama.cpp's default port without one)."""
    words = ["python", "-m", "pytest", "--record", "--judge-model", model]
    ref = ModelRef.parse(model)
    if base_url is None and backend_of(ref).starts_embedded_server and ref.model != EMBEDDED_MODEL:
        base_url = LOCAL_DEFAULT_URL
    if base_url is not None:
        words += ["--judge-base-url", base_url]
    return shlex.join(words)


def _shown(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root.absolute()).as_posix()
    except ValueError:
        return str(path)


def add_init_command(commands: argparse._SubParsersAction) -> None:
    init = commands.add_parser(
        "init",
        help="write a working skeleton for a new judge: prompts, verdict module, planted set, "
        "tests, ini settings, .gitignore block, GitHub workflow (never overwrites a file)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    init.add_argument("name", help="the new judge's name, e.g. support_reply")
    init.add_argument(
        "--callable",
        metavar="PKG.MODULE:FUNCTION",
        help="your own judge function, called as it is: writes its judge.toml, tests and "
        "settings (no prompt, verdict module or example items); needs --model",
    )
    init.add_argument(
        "--model",
        "--judge-model",
        default=None,
        metavar="BACKEND:MODEL",
        help=f"the judge model the offline gate replays (baseline_model; default "
        f"{DEFAULT_MODEL}, the embedded judge)",
    )
    init.add_argument(
        "--base-url",
        "--judge-base-url",
        metavar="URL",
        help="the OpenAI-compatible server that serves a local:NAME model, for the record "
        f"command printed at the end (default for a local model other than the embedded "
        f"judge: {LOCAL_DEFAULT_URL})",
    )
    init.set_defaults(run=_init)
