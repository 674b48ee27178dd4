"""What a rule is, as the engine sees it.

Rules live in ``onnx_lint.rules`` and depend on the engine; the engine only
knows this interface, so it never imports a rule (the CLI and the server pass
the registry in).
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, ClassVar, TypeVar

from onnx_lint.base.links import rule_page_url
from onnx_lint.lint.diagnostics import Applicability, Diagnostic, Fix, FixAvailability, Location, Severity
from onnx_lint.model.edits import Edit, SetType
from onnx_lint.model.shapes import format_dims

if TYPE_CHECKING:
    from onnx_lint.lint.context import LintContext

class Rule:
    """A rule: stable code, kebab-case name, default severity, explanation and check."""

    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[Severity]
    fix_availability: ClassVar[FixAvailability] = FixAvailability.NEVER
    fixable: ClassVar[bool] = False  # derived from fix_availability: some finding can come with a fix
    summary: ClassVar[str]
    # False for a rule that reads only the file's own facts (structure, constants, the checker's
    # verdict), never a derived shape: it runs while a large model's inference is still running in
    # its child process, on the core that would otherwise wait. Correctness never depends on it (a
    # rule that asks for a derived fact anyway waits for it); tests hold each such rule to it.
    needs_inference: ClassVar[bool] = True
    # False for a rule whose findings follow from the nodes, constants, opsets and metadata alone,
    # never from a declared type or shape: a fix that changes declarations only cannot change them,
    # so the re-lint after a fix that neither moved a node nor raised the IR version keeps them
    # instead of running the rule again.
    reads_annotations: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls.fixable = cls.fix_availability is not FixAvailability.NEVER

    def fix_title(self, edits: Sequence[Edit]) -> str:
        """What the fix does, in words: the quick fix's title and the help line (ruff's ``fix_title``).

        Every rule whose fix is ever available says it in its own terms, beside its code.
        """
        raise NotImplementedError(f"{self.code} offers a fix but does not say what it does")

    @classmethod
    def explanation(cls) -> str:
        """The rule's documentation: its module docstring (what / why / example / fix), with its fix availability."""
        module = sys.modules[cls.__module__]
        return cls.fix_availability.under_heading(inspect.cleandoc(module.__doc__ or cls.summary))

    @classmethod
    def url(cls) -> str:
        """The rule's page on the docs site."""
        return rule_page_url(cls.code)

    def check(self, ctx: LintContext) -> Iterable[Diagnostic]:
        raise NotImplementedError

    def prepare(self, ctx: LintContext) -> None:
        """Compute, before inference is in, the facts ``check`` will need that derive from the file alone
        (candidate nodes, constants). Called only for rules that need inference; the default does nothing."""

    def report(
        self,
        ctx: LintContext,
        message: str,
        location: Location,
        *,
        engine: str | None = None,
        edits: list[Edit] | None = None,
        severity: Severity | None = None,
    ) -> Diagnostic:
        """A diagnostic of this rule; ``edits`` make it fixable (a safe fix, titled by ``fix_title``)."""
        fix = Fix(tuple(edits), self.fix_title(edits), Applicability.SAFE) if edits else None
        return Diagnostic(
            file=ctx.display,
            code=self.code,
            name=self.name,
            severity=severity or self.severity,
            message=message,
            location=location,
            engine=engine,
            fix=fix,
        )


AnEdit = TypeVar("AnEdit")


def the_edit(edits: Sequence[Edit], kind: type[AnEdit]) -> AnEdit:
    """The one edit of a fix, as the kind of edit the rule makes (a ``fix_title`` needs its fields)."""
    [edit] = edits
    if not isinstance(edit, kind):
        raise TypeError(f"not a {kind.__name__} edit: {edit!r}")
    return edit


def computed_dims_title(edits: Sequence[Edit], what: str = "shape") -> str:
    """The title of a fix that is one ``SetType`` writing the computed dims on a declaration."""
    [edit] = edits
    if not isinstance(edit, SetType) or edit.dims is None:
        raise TypeError(f"not a dims edit: {edit!r}")
    return f"Declare the computed {what} {format_dims(edit.dims)} on {edit.kind} '{edit.tensor}'"
