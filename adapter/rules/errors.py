"""The rule engine's exceptions.

`RuleError` is a configuration problem found while loading a rule file: its message names the
place (`config: rules[3].name.matches: ...`) so an operator can fix the file. Problems met while
building a query for a request are `adapter.errors` types: `BadRequest` (400) for request input
the engine cannot translate, `RuleQueryError` (500) when a valid-looking rule fails to render.
"""

from __future__ import annotations

from adapter.errors import StatusError


class RuleError(ValueError):
    """A rule file problem; `where` is the dotted path of the offending field."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where}: {problem}")
        self.where = where
        self.problem = problem


class TemplateError(ValueError):
    """A `<< >>` template that does not parse, or fails while rendering."""


class RuleQueryError(StatusError):
    """500: a rule's metricsQuery failed to render for a request (a configuration problem).

    The message is safe for clients; the cause (chained) carries the template detail to log.
    """

    def __init__(
        self, message: str = "unable to fetch metrics: the rule's query could not be built"
    ) -> None:
        super().__init__(message)
