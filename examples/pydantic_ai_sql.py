"""Pydantic AI's SQL agent: structured output, an output validator and ``ModelRetry``.

From the Pydantic AI docs ("Output", output validator functions): an agent whose output
is ``Success`` (a non-empty ``sql_query``) or ``InvalidRequest``, with the output
validator ``validate_sql`` that runs ``EXPLAIN`` on the query and raises ``ModelRetry``
when the database refuses it, so the model is asked again. Changed: the model
``google-gla:gemini-1.5-flash`` is the adapter's model, and the fake database of the docs
accepts only ``SELECT`` queries. ``retries=2`` bounds the retries, so every run
halts within three model requests. ``build_buggy`` plants a harness bug: the validator
catches the wrong exception type, so a refused query raises ``QueryError`` out of the run
instead of asking the model again.

    agentic-machines explore 'examples/pydantic_ai_sql.py:build()' --depth 3
    agentic-machines test 'examples/pydantic_ai_sql.py:build()' -p halts_within:3
    agentic-machines test 'examples/pydantic_ai_sql.py:build_buggy()' -p never_raises --depth 2
"""

import json
from typing import Annotated

from annotated_types import MinLen
from pydantic import BaseModel
from pydantic_ai import Agent, ModelRetry, RunContext

from agentic_machines.adapters.pydantic_ai import machine


class Success(BaseModel):
    sql_query: Annotated[str, MinLen(1)]


class InvalidRequest(BaseModel):
    error_message: str


Output = Success | InvalidRequest


class QueryError(RuntimeError):
    pass


class DatabaseConn:
    async def execute(self, query: str) -> None:
        if not query.removeprefix("EXPLAIN ").upper().startswith("SELECT"):
            raise QueryError(f"syntax error near {query.split()[1]!r}")


def sql_agent(buggy: bool = False) -> Agent:
    agent = Agent(
        output_type=Output,  # type: ignore[arg-type]
        deps_type=DatabaseConn,
        system_prompt="Generate PostgreSQL flavored SQL queries based on user input.",
        retries=2,
        name="sql",
    )
    caught = ValueError if buggy else QueryError  # the planted bug: the wrong exception

    @agent.output_validator
    async def validate_sql(ctx: RunContext[DatabaseConn], output: Output) -> Output:
        if isinstance(output, InvalidRequest):
            return output
        try:
            await ctx.deps.execute(f"EXPLAIN {output.sql_query}")
        except caught as e:
            raise ModelRetry(f"Invalid query: {e}") from e
        else:
            return output

    return agent


def _final(name: str, **arguments) -> str:
    return json.dumps({"tool_calls": [{"name": name, "arguments": arguments}]})


COMPLETIONS = [
    _final(
        "final_result_Success",
        sql_query="SELECT * FROM users WHERE last_active > now() - interval '1 day'",
    ),
    _final("final_result_Success", sql_query="SELEC * FROM users"),
    _final("final_result_Success", sql_query=""),
]
QUESTION = "get me users who were last active yesterday."


def build():
    return machine(sql_agent(), QUESTION, deps=DatabaseConn(), completions=COMPLETIONS)


def build_buggy():
    return machine(sql_agent(buggy=True), QUESTION, deps=DatabaseConn(), completions=COMPLETIONS)
