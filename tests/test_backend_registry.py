"""The backend registry (`judges.calls.backends`): one entry per backend, and no
module outside `judges/calls/` that decides by comparing a backend's name.

The scan reads the source with `ast` (nothing is imported); it is shown to fail on a small
planted package, as the layout rules are.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest

import judges
from judges.calls.backends import (
    BACKENDS,
    IMPORTED,
    KEY_VARIABLES,
    REGISTRY,
    BackendError,
    ModelRef,
    backend_of,
    base_url_for,
    embedded_server_key,
    is_imported,
    make_backend,
    missing_key,
    open_batch_api,
)

ROOT = Path(judges.__file__).resolve().parent
# The one package that may name backends: it holds the registry and the backends.
CALLS = ROOT / "calls"


# --------------------------------------------------------------------------- the registry


def test_a_model_names_exactly_the_registrys_backends() -> None:
    assert BACKENDS == ("openai", "anthropic", "local", "imported")
    assert all(name == kind.name for name, kind in REGISTRY.items())
    assert [ModelRef.parse(f"{name}:m").backend for name in REGISTRY] == list(BACKENDS)
    with pytest.raises(BackendError, match="backend one of openai, anthropic, local, imported "):
        ModelRef.parse("mystery:m")


def test_the_entries_state_each_backends_rules() -> None:
    table = {
        name: (k.key_variable, k.takes_base_url, k.batch_api is not None, k.free_when_unpriced)
        for name, k in REGISTRY.items()
    }
    assert table == {
        "openai": ("OPENAI_API_KEY", True, True, False),
        "anthropic": ("ANTHROPIC_API_KEY", False, True, False),
        "local": ("JUDGES_LOCAL_API_KEY", True, False, True),
        "imported": (None, False, False, True),
    }
    assert KEY_VARIABLES == ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "JUDGES_LOCAL_API_KEY")
    assert IMPORTED == "imported"


def test_a_base_url_reaches_only_the_backends_it_applies_to() -> None:
    url = "http://proxy.example:9000/v1"
    assert base_url_for(ModelRef.parse("openai:gpt-4o"), url) == url
    assert base_url_for(ModelRef.parse("local:smollm2-135m"), url) == url
    assert base_url_for(ModelRef.parse("anthropic:claude-sonnet-4-6"), url) is None
    anthropic = make_backend(ModelRef.parse("anthropic:claude-sonnet-4-6"), base_url=url,
                             live=False, environ={})  # fmt: skip
    assert "proxy.example" not in str(anthropic.client.base_url)  # type: ignore[attr-defined]
    local = make_backend(ModelRef.parse("local:m"), base_url=url, live=False, environ={})
    assert str(local.client.base_url).startswith(url)  # type: ignore[attr-defined]


def test_imported_is_known_by_model_ref_text_or_fingerprint_name() -> None:
    assert is_imported(ModelRef.parse("imported:GPT-4"))
    assert is_imported("imported:GPT-4") and is_imported("imported")
    assert not is_imported("local:smollm2-135m") and not is_imported(None)
    assert not is_imported("mystery:model")
    with pytest.raises(BackendError, match="unknown backend 'mystery'"):
        backend_of("mystery:model")


def test_keys_the_embedded_server_and_batch_apis() -> None:
    assert missing_key(ModelRef.parse("openai:gpt-4o"), {}) == "OPENAI_API_KEY"
    assert missing_key(ModelRef.parse("openai:gpt-4o"), {"OPENAI_API_KEY": "k"}) is None
    assert missing_key(ModelRef.parse("local:m"), {}) is None  # its key is optional
    assert embedded_server_key({"JUDGES_LOCAL_API_KEY": "secret-local"}) == "secret-local"
    local = make_backend(ModelRef.parse("local:m"), live=False, environ={})
    with pytest.raises(BackendError, match="local:m is served locally: it has no batch API"):
        open_batch_api("local:m", local.client)  # type: ignore[attr-defined]
    hosted = make_backend(ModelRef.parse("anthropic:claude"), live=False, environ={})
    assert open_batch_api("anthropic:claude", hosted.client).provider == "anthropic"  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- the scan


def _literals(node: ast.AST) -> Iterator[str]:
    """The string constants a comparison operand is, or holds (a tuple, list or set)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, ast.Tuple | ast.List | ast.Set):
        for element in node.elts:
            yield from _literals(element)


def backend_name_comparisons(root: Path, exempt: Path, names: Sequence[str]) -> list[str]:
    """`file:line` of every comparison of a value to a backend's name outside `exempt`:
    `== "local"`, `in ("local", "imported")`, `case "anthropic":`, `.startswith("imported:")`."""
    prefixes = tuple(f"{name}:" for name in names)
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.is_relative_to(exempt):
            continue
        where = path.relative_to(root.parent).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Compare):
                operands: list[ast.AST] = [node.left, *node.comparators]
            elif isinstance(node, ast.MatchValue):
                operands = [node.value]
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("startswith", "removeprefix", "partition")
            ):
                operands = []
                hits = [text for arg in node.args for text in _literals(arg)]
                if any(text.startswith(prefixes) for text in hits):
                    found.append(f"{where}:{node.lineno}")
            else:
                continue
            if any(text in names for operand in operands for text in _literals(operand)):
                found.append(f"{where}:{node.lineno}")
    return sorted(found, key=lambda hit: (hit.rpartition(":")[0], int(hit.rpartition(":")[2])))


def test_no_module_outside_calls_compares_a_backend_name() -> None:
    problems = backend_name_comparisons(ROOT, CALLS, BACKENDS)
    assert not problems, (
        "ask the registry in judges.calls.backends (backend_of(model).takes_base_url, is_imported, "
        "base_url_for, ...) instead of comparing backend names:\n" + "\n".join(problems)
    )


def _plant(root: Path, files: Mapping[str, str]) -> Path:
    package = root / "pkg"
    for name, source in {"__init__.py": "", "calls/__init__.py": "", **files}.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
    return package


def test_the_scan_finds_each_kind_of_comparison(tmp_path: Path) -> None:
    package = _plant(tmp_path, {
        "session.py": 'def f(model):\n    return model.backend != "anthropic"\n',
        "finale.py": 'x = m.backend in ("local", "imported")\n',
        "terminal.py": 'ok = name.startswith("imported:")\n',
        "match.py": 'match b:\n    case "openai":\n        pass\n',
        "clean.py": 'y = source == "hand"\nz = text.startswith("note:")\n',
        "calls/registry.py": 'local = kind == "local"\n',
    })  # fmt: skip
    names = ("openai", "anthropic", "local", "imported")
    assert backend_name_comparisons(package, package / "calls", names) == [
        "pkg/finale.py:1",
        "pkg/match.py:2",
        "pkg/session.py:2",
        "pkg/terminal.py:1",
    ]
