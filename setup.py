"""Everything about the distribution is in pyproject.toml but one step: the wheel carries the
docs, copied from docs/ into judges/docs/ at build time, so that `python -m judges docs NAME`
shows them where no clone is (a clone, editable install included, reads docs/ itself)."""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

DOCS = Path(__file__).resolve().parent / "docs"


class BuildWithDocs(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):  # the clone's docs/ is read in place
            return
        target = Path(self.build_lib) / "judges" / "docs"
        target.mkdir(parents=True, exist_ok=True)
        for page in sorted(DOCS.glob("*.md")):
            self.copy_file(str(page), str(target / page.name))


setup(cmdclass={"build_py": BuildWithDocs})
