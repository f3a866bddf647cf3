"""`python -m judges docs [NAME]`: the harness's documentation where it is installed. A
wheel carries the pages (judges/docs/, copied from docs/ by setup.py); a clone or an
editable install reads docs/ beside the package. Messages that point to a page name this
command, never a path of the repository, which a wheel user does not have."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import judges

PACKAGE = Path(judges.__file__).resolve().parent
# The wheel's copy first; then the clone's own folder (an editable install's).
PLACES = (PACKAGE / "docs", PACKAGE.parent / "docs")


def docs_folder() -> Path | None:
    return next((folder for folder in PLACES if any(folder.glob("*.md"))), None)


def docs_command(name: str) -> str:
    """The command that shows a page, for a message to print: `python -m judges docs NAME`."""
    return f"python -m judges docs {name.removesuffix('.md')}"


def _first_line(page: Path) -> str:
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.strip():
            return line.lstrip("# ").strip()
    return ""


def _run(args: argparse.Namespace) -> int:
    folder = docs_folder()
    if folder is None:
        print(
            "python -m judges docs: this installation carries no documentation (looked in "
            f"{' and '.join(str(p) for p in PLACES)}); reinstall the harness from its wheel "
            "or a clone",
            file=sys.stderr,
        )
        return 2
    pages = sorted(folder.glob("*.md"), key=lambda page: page.stem)
    if args.name is None:
        width = max(len(page.stem) for page in pages)
        for page in pages:
            print(f"{page.stem:<{width}}  {_first_line(page)}")
        print(f"\n{docs_command('NAME')} prints one page ({folder})")
        return 0
    wanted = args.name.removesuffix(".md")
    page = folder / f"{wanted}.md"
    if page not in pages:
        known = ", ".join(p.stem for p in pages)
        print(f"python -m judges docs: no page {args.name!r}; pages: {known}", file=sys.stderr)
        return 2
    sys.stdout.write(page.read_text(encoding="utf-8"))
    return 0


def add_docs_command(commands: argparse._SubParsersAction) -> None:
    docs = commands.add_parser(
        "docs",
        help="list the harness's documentation pages, or print one",
        description="Without NAME, list the documentation pages; with it, print that page "
        "(Markdown). The pages ship with the harness, so they are here without a clone.",
    )
    docs.add_argument("name", nargs="?", metavar="NAME", help="a page, e.g. your-own-judge")
    docs.set_defaults(run=_run)
