"""The server commands' arguments as types, and how ``workspace/executeCommand`` turns JSON into them.

As in pygls 2, each positional argument of a command is structured, with the server's cattrs
converter, into the type its handler annotates (``async def fix_one(ls, model: Model, key:
FindingKey)``), so a handler starts from checked values. Unlike pygls' own path (replaced in
``server/protocol.py``), a malformed call is answered with InvalidParams naming the command, its
usage, the argument and what it must be (``onnx-lint.graphNode(model URI, graph path, node index):
argument 3 (node index) must be a whole number of 0 or more, not the string "0"``), and a trailing
argument with a default may be left out.
"""

from __future__ import annotations

import inspect
import json
import typing
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import attrs
import cattrs
from pygls.protocol import default_converter

from onnx_lint.base.errors import ConfigError
from onnx_lint.rules import CODES
from onnx_lint.server.api.common import invalid_params, model_path
from onnx_lint.server.quantize_options import checked_quantize_options

A = TypeVar("A", bound="Argument")


class ArgumentError(Exception):
    """Why one argument is refused, worded to follow "argument N (usage)"."""


def shown(value: Any) -> str:
    """A JSON value as an error message names it: its kind, and a short string or number itself."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {json.dumps(value if len(value) <= 60 else value[:57] + '...')}"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    return "an object"


class Argument:
    """A command argument's type: ``usage`` names it in the command's usage line, ``parse`` checks its JSON."""

    usage: ClassVar[str]

    @classmethod
    def parse(cls: type[A], value: Any) -> A:
        raise NotImplementedError


@attrs.frozen
class Model(Argument):
    """The model a command is about, by its ``file:`` URI (or its textual view's URI)."""

    usage: ClassVar[str] = "model URI"
    uri: str
    path: Path

    @classmethod
    def parse(cls, value: Any) -> Model:
        if not isinstance(value, str):
            raise ArgumentError(f"must be the model's URI (file:///.../model.onnx), not {shown(value)}")
        path, _ = model_path(value)
        if path is None:
            raise ArgumentError(f"is not an ONNX model URI: {shown(value)}")
        return cls(value, path)


@attrs.frozen
class FindingKey(Argument):
    """A finding by the key its diagnostic carries in ``data.key``."""

    usage: ClassVar[str] = "data.key"
    values: tuple[str | int | float | None, ...]

    @classmethod
    def parse(cls, value: Any) -> FindingKey:
        if not isinstance(value, list) or not all(v is None or isinstance(v, (str, int, float)) for v in value):
            raise ArgumentError(f"must be the diagnostic's data.key (a list of strings and numbers), not "
                                f"{shown(value)}")
        return cls(tuple(value))


@attrs.frozen
class RuleCode(Argument):
    """One of this onnx-lint's rule codes."""

    usage: ClassVar[str] = "rule code"
    code: str

    @classmethod
    def parse(cls, value: Any) -> RuleCode:
        if not isinstance(value, str):
            raise ArgumentError(f"must be a rule code such as OL001, not {shown(value)}")
        if value not in CODES:
            raise ArgumentError(f"is not a rule code of this onnx-lint: {shown(value)}")
        return cls(value)


@attrs.frozen
class QuantizeOptions(Argument):
    """Quantize's options (docs/editors.md), each checked (``server/quantize_options.py``); unknown keys dropped."""

    usage: ClassVar[str] = "quantize options"
    checked: dict[str, Any] = attrs.field(factory=dict)

    @classmethod
    def parse(cls, value: Any) -> QuantizeOptions:
        if not isinstance(value, dict):
            raise ArgumentError(f"must be the quantize options (an object), not {shown(value)}")
        try:
            return cls(checked_quantize_options(value))
        except ConfigError as exc:
            raise ArgumentError(f"is refused: {exc}") from None


DEFAULTS = QuantizeOptions()  # the settings' quantize options alone


@attrs.frozen
class FindingLocation(Argument):
    """Where a finding is, as its diagnostic carries it in ``data.location``."""

    usage: ClassVar[str] = "data.location"
    path: str
    tensor: str | None = None
    node: str | None = None
    op_type: str | None = None

    @classmethod
    def parse(cls, value: Any) -> FindingLocation:
        names = ("tensor", "node", "op_type")
        if not isinstance(value, dict) or not isinstance(value.get("path"), str) or \
                not all(value.get(k) is None or isinstance(value[k], str) for k in names):
            raise ArgumentError(f"must be the diagnostic's data.location (an object with a string path), not "
                                f"{shown(value) if not isinstance(value, dict) else json.dumps(value)[:80]}")
        return cls(value["path"], *(value.get(k) for k in names))

    def fields(self) -> dict[str, str | None]:
        return attrs.asdict(self)


@attrs.frozen
class GraphPath(Argument):
    """A graph of the model by its path (``main``, ``main/node[3]:then_branch``), as ``modelGraph`` names it."""

    usage: ClassVar[str] = "graph path"
    path: str

    @classmethod
    def parse(cls, value: Any) -> GraphPath:
        if not isinstance(value, str):
            raise ArgumentError(f"must be a graph path (a string), not {shown(value)}")
        return cls(value)


@attrs.frozen
class NodeIndex(Argument):
    """A node by its index in its graph."""

    usage: ClassVar[str] = "node index"
    index: int

    @classmethod
    def parse(cls, value: Any) -> NodeIndex:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ArgumentError(f"must be a whole number of 0 or more, not {shown(value)}")
        return cls(value)


ARGUMENT_TYPES: tuple[type[Argument], ...] = (Model, FindingKey, RuleCode, QuantizeOptions, FindingLocation,
                                               GraphPath, NodeIndex)


def command_converter() -> cattrs.Converter:
    """pygls' converter, which structures each argument type with its own check."""
    converter = default_converter()
    for kind in ARGUMENT_TYPES:
        converter.register_structure_hook(kind, lambda value, argument_type: argument_type.parse(value))
    return converter


@attrs.frozen
class Parameter:
    name: str
    kind: type[Argument]
    optional: bool


def command_parameters(handler: Callable[..., Any]) -> list[Parameter]:
    """The JSON arguments a command's handler takes, in order (the server it is given is not one)."""
    function = getattr(handler, "func", handler)  # pygls wraps a handler that takes the server
    hints = typing.get_type_hints(function)
    parameters = list(inspect.signature(function).parameters.values())
    if function is not handler:
        parameters = parameters[1:]
    taken = []
    for parameter in parameters:
        kind = hints.get(parameter.name)
        if not (isinstance(kind, type) and issubclass(kind, Argument)) or \
                parameter.kind not in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
            raise TypeError(f"{function.__qualname__}: parameter {parameter.name} is not annotated with an "
                            f"Argument type")
        taken.append(Parameter(parameter.name, kind, parameter.default is not parameter.empty))
    return taken


def usage(command: str, parameters: list[Parameter]) -> str:
    """``onnx-lint.fix(model URI, data.key)``; an argument that may be left out in brackets."""
    return f"{command}({', '.join(f'[{p.kind.usage}]' if p.optional else p.kind.usage for p in parameters)})"


def structure_arguments(command: str, parameters: list[Parameter], arguments: Sequence[Any] | None,
                        converter: cattrs.Converter) -> list[Argument]:
    """The handler's arguments from the JSON ones; InvalidParams naming the command and the first bad one."""
    given = list(arguments or [])
    required = sum(not p.optional for p in parameters)
    if len(given) > len(parameters):
        raise invalid_params(f"{usage(command, parameters)}: takes at most {len(parameters)} "
                             f"argument{'s' if len(parameters) != 1 else ''}, got {len(given)}")
    values: list[Argument] = []
    for number, parameter in enumerate(parameters, 1):
        where = f"{usage(command, parameters)}: argument {number} ({parameter.kind.usage})"
        if number > len(given):
            if number <= required:
                raise invalid_params(f"{where} is missing")
            break
        try:
            values.append(converter.structure(given[number - 1], parameter.kind))
        except ArgumentError as exc:
            raise invalid_params(f"{where} {exc}") from None
    return values
