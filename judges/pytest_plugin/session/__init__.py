"""The run: `JudgesSession` and its parts, one concern each (see `judges_session`).

Imports below `judges.pytest_plugin` only, and neither pytest nor vcrpy: judging goes
through the cassette facade (`judges.calls.cassettes`).
"""

from judges.pytest_plugin.session.catalogue import RETEST_DRAW
from judges.pytest_plugin.session.judges_session import JudgesSession
from judges.pytest_plugin.session.judging import JudgementMissing
from judges.pytest_plugin.session.settings import RecordMode, RunPlan, Settings

__all__ = ["RETEST_DRAW", "JudgementMissing", "JudgesSession", "RecordMode", "RunPlan", "Settings"]
