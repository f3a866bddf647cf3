"""Reply fixtures and their properties: a callable judge's own code run on raw replies.

A reply fixture (`planted_sets/<judge>/replies.jsonl`) is a planted item carrying the
replies a model gave, in call order. The team's callable runs with every request it sends
answered by them (`cassettes.fixture_replies`): no model, no network, no cassette. Each
fixture has two tests:

- `test_reply_fixture`: the verdict meets the fixture's expectations;
- `test_reply_properties`: hypothesis varies how the replies spell the names the item gave
  the judge (a criterion, a label, a field: any string of the inputs the replies echo) in
  case, `_` versus space, surrounding white space and Unicode normal form, and reorders and
  adds keys; the verdict must not change. A failure shows the smallest reply that changes
  it (hypothesis shrinks every variation back to the original spelling it can).

They test the team's parsing and scoring, not the model: they make no result row and feed
no statistic.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

import pytest

from judges.calls.backends import ModelRef, replay_keys
from judges.calls.cassettes import abandon, fixture_replies, is_replay_miss
from judges.core.runner import BUDGET_TIMEOUTS
from judges.core.team_judge import CallableTimeout, TeamJudgeError, as_verdict, within
from judges.sets.items import ReplyFixture

if TYPE_CHECKING:
    from hypothesis.strategies import DataObject

    from judges.pytest_plugin.session import JudgesSession

CaseId = Callable[[Any], str]
# Each kind of variation, by the name `reply_properties` in judge.toml uses.
VARIATIONS = ("case", "separator", "whitespace", "unicode", "key_order", "extra_key")
EXAMPLES = 60  # varied replies tried per fixture; derandomized, so every run tries the same
EXTRA_KEY = ("comment", "an extra key the judge was not asked for")


@dataclass(frozen=True)
class ReplyCase:
    """One reply fixture of a callable judge, under its current version."""

    judge: str
    version: str
    fixture: ReplyFixture

    @property
    def test_id(self) -> str:
        return f"{self.judge}-{self.version}-{self.fixture.test_id}"


def reply_params(session: JudgesSession, case_id: CaseId) -> list[Any]:
    params = []
    for planted in session.catalogue.planted_sets.values():
        team = session.catalogue.catalog[planted.judge].team
        if team is None:
            continue
        for fixture in planted.reply_fixtures:
            case = ReplyCase(planted.judge, team.version, fixture)
            params.append(pytest.param(case, id=case.test_id))
    return params


PARAMS: dict[str, Callable[[JudgesSession, CaseId], list[Any]]] = {"reply_case": reply_params}


def verdict_on(session: JudgesSession, case: ReplyCase, replies: Sequence[str]) -> dict[str, Any]:
    """The callable's verdict on the item's inputs, its requests answered by `replies`;
    an AssertionError says what went wrong in the team's code."""
    __tracebackhide__ = True
    spec = session.catalogue.catalog[case.judge]
    team = spec.team
    assert team is not None  # reply fixtures are loaded for callable judges only
    where = f"{case.fixture.id} (reply fixture)"
    model = ModelRef.parse(spec.config.baseline_model).model
    budget = BUDGET_TIMEOUTS * session.settings.judge_timeout_s
    try:
        arguments = team.bind(case.fixture.inputs)
        with replay_keys(), fixture_replies(list(replies), model):
            returned = within(partial(team.call, arguments), budget, f"judges-fixture-{where}")
        return as_verdict(returned)
    except TeamJudgeError as error:
        raise AssertionError(f"{where}: {team.ref} {error}") from None
    except CallableTimeout as timeout:
        abandon(timeout.thread)  # what it sends later reaches no cassette
        raise AssertionError(
            f"{where}: {team.ref} gave no verdict within {timeout.seconds:g} s "
            f"({BUDGET_TIMEOUTS} x --judge-timeout {session.settings.judge_timeout_s:g}) on "
            f"the replies {_shown(replies)}; raise --judge-timeout SECONDS for a slow judge"
        ) from None
    except Exception as error:
        if is_replay_miss(error):
            raise AssertionError(
                f"{where}: {team.ref} sent more requests than the fixture has replies "
                f"({len(replies)}), or to an endpoint a fixture does not answer (chat "
                "completions, messages, responses): add its reply to `replies`, in call order"
            ) from None
        raise AssertionError(
            f"{where}: {team.ref} raised {type(error).__name__}: {error}\n"
            f"  on the replies {_shown(replies)}"
        ) from error


def check_reply_fixture(session: JudgesSession, case: ReplyCase) -> None:
    """The verdict on the fixture's replies meets its expectations."""
    __tracebackhide__ = True
    verdict = verdict_on(session, case, case.fixture.replies)
    unmet = [str(e) for e in case.fixture.expect if not e.holds(verdict)]
    if unmet:
        kind = "control" if case.fixture.control else "defect"
        raise AssertionError(
            f"{case.fixture.id} ({kind}, reply fixture): expected {'; '.join(unmet)}; "
            f"{case.judge} {case.version} returned {json.dumps(verdict, ensure_ascii=False)}\n"
            f"  on the replies {_shown(case.fixture.replies)}"
        )


def check_reply_properties(session: JudgesSession, case: ReplyCase) -> None:
    """The verdict does not change when the replies spell the item's names differently."""
    __tracebackhide__ = True
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    spec = session.catalogue.catalog[case.judge]
    variations = tuple(spec.config.reply_properties)
    replies = case.fixture.replies
    names = echoed_names(case.fixture.inputs, replies)
    structural = {"key_order", "extra_key"} & set(variations)
    if not names and not (structural and any(_json_object(r) for r in replies)):
        pytest.skip(
            f"{case.fixture.id}: no string of its inputs appears in its replies, and none is a "
            "JSON object: nothing to vary"
        )
    original = verdict_on(session, case, replies)

    @settings(
        max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
        suppress_health_check=[HealthCheck.too_slow], print_blob=False,
    )  # fmt: skip
    @given(st.data())
    def same_verdict(data: DataObject) -> None:
        varied = [vary(reply, names, variations, data) for reply in replies]
        if varied == list(replies):
            return
        verdict = verdict_on(session, case, varied)
        if verdict != original:
            raise AssertionError(
                f"{case.fixture.id} (reply fixture): {spec.team and spec.team.ref} changed its "
                f"verdict when the reply spelled the item's names differently "
                f"({', '.join(variations)}):\n"
                f"  reply:    {_shown(varied)}\n  original: {_shown(replies)}\n"
                f"  verdict:  {json.dumps(verdict, ensure_ascii=False)}\n"
                f"  original: {json.dumps(original, ensure_ascii=False)}\n"
                "A judge must read a name the model echoes however it is spelled, and never "
                "drop an item without saying so."
            )

    same_verdict()


def echoed_names(inputs: dict[str, Any], replies: Sequence[str]) -> list[str]:
    """How the replies spell the strings of the inputs (values, list members, nested) they
    echo: a JSON key or string value equal to one under `folded` (a model may already have
    drifted), in other text the input itself. These are the names a judge's parsing must
    match."""
    wanted = {folded(s): s for s in _strings(inputs) if s.strip()}
    found: set[str] = set()
    for reply in replies:
        parsed = _json_object(reply)
        if parsed is not None:
            found |= {s for s in _json_strings(parsed) if folded(s) in wanted}
        found |= {s for s in wanted.values() if s in reply}
    return sorted(found, key=lambda s: (-len(s), s))  # longest first: a name inside another


def folded(name: str) -> str:
    """A name as every variation leaves it: normal form, case, `_` and white space."""
    return " ".join(unicodedata.normalize("NFKC", name).replace("_", " ").split()).casefold()


def _json_strings(value: Any) -> Iterator[str]:
    """Every key and string value of a parsed JSON document."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _json_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _json_strings(item)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def _json_object(text: str) -> Any:
    try:
        parsed = json.loads(text)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def vary(reply: str, names: Sequence[str], variations: Sequence[str], data: DataObject) -> str:
    """One varied spelling of a reply: a JSON object is varied in its structure (names as
    keys and values, key order, an extra key); other text at each echoed name."""
    from hypothesis import strategies as st

    parsed = _json_object(reply)
    if parsed is None:
        return _vary_text(reply, names, variations, data)
    varied = _vary_json(parsed, set(names), variations, data)
    if "extra_key" in variations and data.draw(st.booleans(), label="extra key"):
        varied[EXTRA_KEY[0]] = EXTRA_KEY[1]
    return (
        reply
        if varied == parsed and list(varied) == list(parsed)
        else json.dumps(varied, ensure_ascii=False)
    )


def _vary_json(value: Any, names: set[str], variations: Sequence[str], data: DataObject) -> Any:
    from hypothesis import strategies as st

    if isinstance(value, dict):
        keys = list(value)
        if "key_order" in variations and len(keys) > 1:
            keys = data.draw(st.permutations(keys), label="key order")
        result: dict[str, Any] = {}
        for key in keys:
            new_key = respell(key, variations, data) if key in names else key
            if new_key in result or (new_key != key and new_key in value):
                new_key = key  # two names spelled alike: the variation would merge them
            result[new_key] = _vary_json(value[key], names, variations, data)
        return result
    if isinstance(value, list):
        return [_vary_json(item, names, variations, data) for item in value]
    if isinstance(value, str) and value in names:
        return respell(value, variations, data)
    return value


def _vary_text(text: str, names: Sequence[str], variations: Sequence[str], data: DataObject) -> str:
    if not names:
        return text
    pattern = re.compile("|".join(re.escape(name) for name in names))
    return pattern.sub(lambda match: respell(match.group(0), variations, data), text)


# Each variation by the name a failing example shows; the first of each is no change, the
# value hypothesis shrinks to.
_CASES: dict[str, Callable[[str], str]] = {
    "as given": str, "lower": str.lower, "upper": str.upper, "title": str.title,
    "swapped": str.swapcase,
}  # fmt: skip
_SEPARATORS: dict[str, Callable[[str], str]] = {
    "as given": str,
    "spaces as _": lambda s: s.replace(" ", "_"),
    "_ as spaces": lambda s: s.replace("_", " "),
}
_SPACES = ("", " ", "  ", "\t")
_FORMS: tuple[Literal["NFC", "NFD", "NFKC", "NFKD"], ...] = ("NFC", "NFD", "NFKC", "NFKD")


def respell(name: str, variations: Sequence[str], data: DataObject) -> str:
    """The name as a model might echo it; each kind of variation shrinks to none."""
    from hypothesis import strategies as st

    spelled = name
    if "case" in variations:
        case = data.draw(st.sampled_from(list(_CASES)), label=f"case of {name!r}")
        spelled = _CASES[case](spelled)
    if "separator" in variations:
        separator = data.draw(st.sampled_from(list(_SEPARATORS)), label="separators")
        spelled = _SEPARATORS[separator](spelled)
    if "unicode" in variations:
        form = data.draw(st.sampled_from((None, *_FORMS)), label="Unicode normal form")
        spelled = unicodedata.normalize(form, spelled) if form else spelled
    if "whitespace" in variations:
        left = data.draw(st.sampled_from(_SPACES), label="white space before")
        right = data.draw(st.sampled_from(_SPACES), label="white space after")
        spelled = f"{left}{spelled}{right}"
    return spelled


def _shown(replies: Sequence[str]) -> str:
    return json.dumps(list(replies), ensure_ascii=False)
