"""The runner against SDK clients that answer from a script: one subject and one good reply
per built-in judge, the SDKs' own response types, and each backend flavour."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from anthropic.types import Message
from openai.types.chat import ChatCompletion

from judges.calls.backends import AnthropicBackend, LocalBackend, ModelRef, OpenAIBackend, Price
from judges.core.results import Expectation
from judges.core.runner import Call, Subject, judge
from judges.core.spec import JudgeSpec, load_catalog

CATALOG = load_catalog()

SUBJECTS = {
    "product_identity": Subject(
        "PE-90",
        "sign_flip",
        False,
        {
            "question": "What does a BRC pay?",
            "reference": "A coupon, always.",
            "answer": "A coupon only if the barrier holds.",
        },
        (Expectation(field="factual_accuracy", op="<=", value=3),),
    ),
    "geval": Subject(
        "GE-90",
        "control",
        True,
        {"transcript": "A: We approved the roof. B: Good.", "summary": "The roof was approved."},
        (Expectation(field="overall", op=">=", value=1),),
    ),
    "relevance": Subject(
        "RE-90",
        "control",
        True,
        {
            "query": "decoupled distributed RL",
            "criteria": [
                {"name": "decoupled workers", "weight": 0.5},
                {"name": "distributed RL", "weight": 0.5},
            ],
            "document": {"id": "d1", "title": "IMPALA", "text": "Actors and learners decoupled."},
        },
        (Expectation(field="level", op="==", value=3),),
    ),
}

GOOD = {
    "product_identity": {
        "reference_product": "BRC",
        "answer_product": "BRC",
        "product_identity_match": True,
        "factual_accuracy": 2,
        "completeness": 2,
        "causal_reasoning": 1,
        "rationale": "Close.",
    },
    "geval": {"score": 4, "rationale": "Fine."},
    "relevance": {
        "criteria": [
            {
                "name": "decoupled workers",
                "relevance": "Perfectly Relevant",
                "evidence": "decoupled",
            },
            {"name": "distributed rl", "relevance": "Perfectly Relevant", "evidence": "learners"},
        ]
    },
}


def latest(spec: JudgeSpec) -> str:
    return spec.versions[-1]


def chat_completion(
    text: str | None, finish: str = "stop", usage: tuple[int, int] | None = (120, 30)
) -> ChatCompletion:
    data: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "test-model",
        "choices": [
            {
                "index": 0,
                "finish_reason": finish,
                "message": {"role": "assistant", "content": text},
            }
        ],
    }
    if usage is not None:
        data["usage"] = {
            "prompt_tokens": usage[0],
            "completion_tokens": usage[1],
            "total_tokens": sum(usage),
        }
    return ChatCompletion.model_validate(data)


def anthropic_message(
    text: str,
    stop: str = "end_turn",
    usage: tuple[int, int] = (120, 30),
    blocks: list | None = None,
) -> Message:
    return Message.model_validate(
        {
            "id": "msg_test",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": blocks if blocks is not None else [{"type": "text", "text": text}],
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
        }
    )


Outcome = tuple[str, bool] | BaseException  # (reply text, cut off?) or an error to raise


class FakeClient:
    """Records every `create(**kwargs)` and answers with the SDK's own response type."""

    def __init__(self, shape: str, respond: Callable[[dict[str, Any]], Outcome]) -> None:
        self.shape = shape
        self.respond = respond
        self.calls: list[dict[str, Any]] = []
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self._create))
        self.messages = SimpleNamespace(create=self._create)

    def _create(self, **kwargs: Any) -> Any:
        self.calls.append(kwargs)
        outcome = self.respond(kwargs)
        if isinstance(outcome, BaseException):
            raise outcome
        text, cut = outcome
        if self.shape == "anthropic":
            return anthropic_message(text, "max_tokens" if cut else "end_turn")
        return chat_completion(text, "length" if cut else "stop")


@dataclass(frozen=True)
class Flavour:
    backend: type
    shape: str
    model: ModelRef

    def build(self, respond: Callable[[dict[str, Any]], Outcome]) -> tuple[Any, FakeClient]:
        client = FakeClient(self.shape, respond)
        return self.backend(self.model, client), client


FLAVOURS = {
    "openai": Flavour(OpenAIBackend, "openai", ModelRef("openai", "gpt-4o-mini")),
    "local": Flavour(LocalBackend, "openai", ModelRef("local", "smollm2-135m")),
    "anthropic": Flavour(AnthropicBackend, "anthropic", ModelRef("anthropic", "claude-sonnet-4-6")),
}


def user_prompt(kwargs: dict[str, Any]) -> str:
    return next(m["content"] for m in kwargs["messages"] if m["role"] == "user")


class Script:
    """Answers per facet: a list of outcomes consumed in order, the last one repeating."""

    def __init__(self, judge_name: str, outcomes: dict[str | None, list[Outcome]]) -> None:
        spec = CATALOG[judge_name]
        fields = spec.parse_inputs(SUBJECTS[judge_name].inputs).prompt_fields()  # type: ignore[attr-defined]
        prompt = spec.prompts[latest(spec)]
        self.facet_of = {
            prompt.render(facet, fields): facet for facet in (spec.config.facets or (None,))
        }
        assert len(self.facet_of) == len(spec.config.facets or (None,))
        self.good = (json.dumps(GOOD[judge_name]), False)
        self.outcomes = outcomes
        self.calls: Counter[str | None] = Counter()

    def __call__(self, kwargs: dict[str, Any]) -> Outcome:
        facet = self.facet_of[user_prompt(kwargs)]
        planned = self.outcomes.get(facet, [self.good])
        outcome = planned[min(self.calls[facet], len(planned) - 1)]
        self.calls[facet] += 1
        return outcome


def run(
    judge_name: str, flavour: str, script: Script, **call_options: Any
) -> tuple[Any, FakeClient]:
    spec = CATALOG[judge_name]
    backend, client = FLAVOURS[flavour].build(script)
    call = Call(backend=backend, price=Price(1.0, 2.0), live=False, **call_options)
    return judge(spec, latest(spec), SUBJECTS[judge_name], call), client
