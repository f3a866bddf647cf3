"""Root of the suite. The `judges` plugin (entry point `pytest11`) does the heavy lifting.

Hypothesis profiles: `ci` is loaded automatically when CI is set (derandomised, no
deadline, no example database); `dev` is the default for local runs.
"""

import os
from collections.abc import Iterator

import pytest
from hypothesis import settings
from threadpoolctl import threadpool_limits

# The statistics here work on arrays of tens to thousands of values, where BLAS threads only
# contend: with one xdist worker per core, each worker's OpenBLAS threads oversubscribe the
# machine and spin (one false-alarm simulation took 2.5x the CPU time on 2 cores). One
# thread per process: this one, its xdist workers and the tests' inner pytest runs inherit
# the variable; a value already in the environment wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
threadpool_limits(limits=int(os.environ["OPENBLAS_NUM_THREADS"]), user_api="blas")

settings.register_profile("dev", max_examples=100, deadline=None)
settings.load_profile("ci" if settings.get_current_profile_name() == "ci" else "dev")


@pytest.fixture(autouse=True, scope="session")
def _corpus_store_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The corpus report's Parquet store (judges/corpus/store.py) is cached under a folder of
    the test session, never the user's cache; subprocesses inherit the variable."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JUDGES_CACHE_DIR", str(tmp_path_factory.mktemp("judges-cache")))
        yield
