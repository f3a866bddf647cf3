"""Root of the suite. The `judges` plugin (entry point `pytest11`) does the heavy lifting.

Hypothesis profiles: `ci` is loaded automatically when CI is set (derandomised, no
deadline, no example database); `dev` is the default for local runs.
"""

from hypothesis import settings

settings.register_profile("dev", max_examples=100, deadline=None)
settings.load_profile("ci" if settings.get_current_profile_name() == "ci" else "dev")
