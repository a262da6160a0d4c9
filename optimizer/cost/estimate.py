"""What a run will cost, said before it spends: its episodes by phase, requests, tokens and USD per model, as a
range (low – high).

A command describes what it will run as a `Plan`: per phase, how many agent episodes each model plays at least and
at most (the search stops early, rounds end on a rule), and how many proposer and judge requests follow. An
`EpisodeShape` says what one episode costs: model turns, and per turn the input beyond the definitions (system
prompt, task, the conversation so far) and the output. Without earlier runs of the server it is the measured default
(`DEFAULT_SHAPE`, from the bundled real-model recordings); with them (`shape_from_runs`), their own figures.

`estimate(plan, shape, …)` prices it three ways, each a range: as sent (`plain`: every input token at the input
price), with the prompt caching the product asks for (`cached`: the definitions and system prompt of each request
read from the cache but the first of its model and definition set, which writes it), and through the Message
Batches API (`batch`: the agents' turns at the batch discount). A model the price table does not know is counted
in tokens and left out of the USD, and the estimate says so.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from optimizer.cost.prices import PriceTable, is_offline_model
from optimizer.models.defaults import CLAUDE_JUDGE

Range = tuple[float, float]


@dataclass(frozen=True)
class Phase:
    """A part of a run: `episodes` (low, high) that every agent model plays, on `definition_sets` (low, high)
    distinct definition sets (each writes the cache once per model)."""

    name: str
    episodes: tuple[int, int]
    definition_sets: tuple[int, int] = (1, 1)


@dataclass(frozen=True)
class Plan:
    """What a command will run: its phases, the agent models, and the requests beside the agents' (the proposer's
    and the judge's, low and high)."""

    command: str
    phases: tuple[Phase, ...]
    agents: tuple[str, ...]
    proposer: str | None = None
    proposer_requests: tuple[int, int] = (0, 0)
    judge: str | None = None
    judged_episodes: tuple[int, int] = (0, 0)
    notes: tuple[str, ...] = ()
    tasks: tuple[tuple[str, int], ...] = ()
    """The tasks each split holds, as (split, count), for the plan's description."""

    def episodes(self) -> tuple[int, int]:
        """Agent episodes of the whole run, every model together."""
        low = sum(p.episodes[0] for p in self.phases) * len(self.agents)
        return low, sum(p.episodes[1] for p in self.phases) * len(self.agents)


@dataclass(frozen=True)
class EpisodeShape:
    """One agent episode, low and high: model turns, and per turn the input tokens beyond the definitions and the
    output tokens; `source` says where the figures come from."""

    turns: Range
    input_per_turn: Range
    output_per_turn: Range
    source: str


DEFAULT_SHAPE = EpisodeShape(turns=(2.0, 4.0), input_per_turn=(400.0, 2500.0), output_per_turn=(60.0, 400.0),
                             source="the measured default (the bundled real-model recordings: 2 to 2.6 turns per "
                                    "episode, 500 to 2,000 input tokens per turn beside the definitions and up to "
                                    "half the definitions again where results are large, 70 to 200 output tokens "
                                    "per turn)")
"""Measured on the bundled recordings (docs/figures.md, "Cost estimates"); the high end adds half the definitions
per turn (`input_per_turn` is widened by `definitions / 2` in `estimate`): large catalogs return large results."""
PROPOSER_INSTRUCTIONS = 3_000
"""Tokens of the proposer's own instructions, beside the definitions and the evidence."""
PROPOSER_OUTPUT = (0.6, 1.6)
"""A proposer answer's output, per candidate, as a share of the definitions' tokens (low, high)."""
JUDGE_REQUEST = (400, 1_200)
"""Input tokens of one judge request (the rubric, the task and the answer), low and high; its output is short."""


@dataclass
class Cost:
    """Tokens and USD (low, high) of one model's requests; `usd` None when the model has no price."""

    model: str
    role: str
    requests: Range = (0.0, 0.0)
    input_tokens: Range = (0.0, 0.0)
    output_tokens: Range = (0.0, 0.0)
    plain: Range | None = (0.0, 0.0)
    cached: Range | None = (0.0, 0.0)
    batch: Range | None = (0.0, 0.0)

    def to_json(self) -> dict[str, Any]:
        def pair(r: Range | None, digits: int = 4) -> list[float] | None:
            return None if r is None else [round(r[0], digits), round(r[1], digits)]

        return {"model": self.model, "role": self.role, "requests": pair(self.requests, 0),
                "input_tokens": pair(self.input_tokens, 0), "output_tokens": pair(self.output_tokens, 0),
                "usd": pair(self.plain), "usd_cached": pair(self.cached), "usd_batch": pair(self.batch)}


@dataclass
class Estimate:
    plan: Plan
    shape: EpisodeShape
    definition_tokens: int
    costs: list[Cost] = field(default_factory=list)
    prices: str = ""

    def total(self, kind: str = "plain") -> Range:
        """USD of every priced model together, (low, high), for kind plain, cached or batch."""
        ranges = [getattr(c, kind) for c in self.costs if getattr(c, kind) is not None]
        return (sum(r[0] for r in ranges), sum(r[1] for r in ranges))

    def unpriced(self) -> list[str]:
        return sorted({c.model for c in self.costs if c.plain is None})

    def to_json(self) -> dict[str, Any]:
        def pair(r: Range) -> list[float]:
            return [round(r[0], 4), round(r[1], 4)]

        return {"command": self.plan.command, "tasks": dict(self.plan.tasks), "usd": pair(self.total()),
                "usd_cached": pair(self.total("cached")),
                "usd_batch": pair(self.total("batch")), "episodes": list(self.plan.episodes()),
                "phases": [{"name": p.name, "episodes_per_model": list(p.episodes)} for p in self.plan.phases],
                "models": [c.to_json() for c in self.costs], "definition_tokens": self.definition_tokens,
                "shape": {"turns": list(self.shape.turns), "input_per_turn": list(self.shape.input_per_turn),
                          "output_per_turn": list(self.shape.output_per_turn), "source": self.shape.source},
                "unpriced": self.unpriced(), "prices": self.prices, "notes": list(self.plan.notes)}


def judged(judge: str | None, agents: Sequence[str], tasks: Iterable[Any]) -> tuple[str | None, int]:
    """The judge a run's plan counts and how many of `tasks` it grades (`match: judge` with an answer): the one
    set, else Claude's default judge when an agent is Claude (the judge module's rule); (None, 0) when none."""
    graded = sum(1 for t in tasks if t.expect.match == "judge" and t.expect.answer is not None)
    if not graded:
        return None, 0
    chosen = judge or (CLAUDE_JUDGE if any("claude" in a for a in agents) else None)
    return chosen, graded if chosen else 0


def eval_plan(command: str, agents: Sequence[str], *, tasks: int, epochs: int = 1, sides: tuple[str, ...] = ("eval",),
              judge: str | None = None, judged: int = 0) -> Plan:
    """The plan of a command that plays `tasks` once per epoch and model under each of `sides` (definition sets):
    `optimizer eval` (one side) and `optimizer regress` (baseline and candidate)."""
    phases = tuple(Phase(side, (tasks * epochs,) * 2) for side in sides)
    judged_n = judged * epochs * len(sides)
    return Plan(command, phases, tuple(agents), judge=judge, judged_episodes=(judged_n, judged_n),
                tasks=(("run", tasks),))


GENERATOR_TURN = (2_000, 1_500)
"""A generation turn's input beside the definitions: the instructions, then what each earlier turn added (tokens)."""
GENERATOR_OUTPUT = (150, 400)
"""Output tokens per turn (low, high), and per task written in the last."""


def generation_estimate(model: str, prices: PriceTable, *, definition_tokens: int, max_turns: int,
                        n: int) -> Estimate:
    """`tasks generate`: one conversation of 3 to `max_turns` turns; turn t sends the definitions, the instructions
    and the t earlier turns' calls and results; the last writes up to `n` tasks."""
    plan = Plan("tasks generate", (), (), notes=(f"a conversation of 3 to {max_turns} turns (--max-turns), "
                                                 f"writing at most {n} tasks (--n)",))
    found = Estimate(plan, DEFAULT_SHAPE, definition_tokens, prices=prices.source)
    turns = (min(3, max_turns), max_turns)
    first, growth = GENERATOR_TURN
    inputs = tuple(sum(definition_tokens + first + t * growth * share for t in range(count))
                   for count, share in zip(turns, (0.5, 1.0), strict=True))
    outputs = (turns[0] * GENERATOR_OUTPUT[0] + n * GENERATOR_OUTPUT[0] / 2,
               turns[1] * GENERATOR_OUTPUT[1] + n * GENERATOR_OUTPUT[1])
    if not is_offline_model(model):
        found.costs.append(_priced(Cost(model, "generator", (float(turns[0]), float(turns[1])),
                                        (inputs[0], inputs[1]), outputs),
                                   prices, definition_tokens, (1, 1), batchable=False))
    return found


def estimate(plan: Plan, shape: EpisodeShape, prices: PriceTable, *, definition_tokens: int, system_tokens: int = 0,
             evidence_tokens: int = 12_000, candidates: int = 4) -> Estimate:
    """The plan priced (see the module docstring). `definition_tokens`: the catalog's tools as sent; `system_tokens`:
    the system prompt's; `evidence_tokens` and `candidates`: the proposer's evidence budget and answers per
    request."""
    found = Estimate(plan, shape, definition_tokens, prices=prices.source)
    prefix = definition_tokens + system_tokens
    low_in, high_in = shape.input_per_turn[0], shape.input_per_turn[1] + definition_tokens / 2
    sets = (sum(p.definition_sets[0] for p in plan.phases), sum(p.definition_sets[1] for p in plan.phases))
    episodes = (sum(p.episodes[0] for p in plan.phases), sum(p.episodes[1] for p in plan.phases))
    for agent in plan.agents:
        if is_offline_model(agent):
            continue
        requests = (episodes[0] * shape.turns[0], episodes[1] * shape.turns[1])
        cost = _priced(Cost(agent, "agent", requests,
                            (requests[0] * (definition_tokens + low_in), requests[1] * (definition_tokens + high_in)),
                            (requests[0] * shape.output_per_turn[0], requests[1] * shape.output_per_turn[1])),
                       prices, prefix, sets, batchable=True)
        found.costs.append(cost)
    if plan.proposer and plan.proposer_requests[1] and not is_offline_model(plan.proposer):
        low_n, high_n = plan.proposer_requests
        per_input = (PROPOSER_INSTRUCTIONS + definition_tokens + evidence_tokens // 4,
                     PROPOSER_INSTRUCTIONS + definition_tokens + evidence_tokens)
        per_output = (candidates * definition_tokens * PROPOSER_OUTPUT[0],
                      min(16_000.0, candidates * definition_tokens * PROPOSER_OUTPUT[1] + 1_000))
        found.costs.append(_priced(Cost(plan.proposer, "proposer", (low_n, high_n),
                                        (low_n * per_input[0], high_n * per_input[1]),
                                        (low_n * per_output[0], high_n * per_output[1])),
                                   prices, 0, (0, 0), batchable=False))
    if plan.judge and plan.judged_episodes[1] and not is_offline_model(plan.judge):
        low_n, high_n = (n * len(plan.agents) for n in plan.judged_episodes)
        found.costs.append(_priced(Cost(plan.judge, "judge", (low_n, high_n),
                                        (low_n * JUDGE_REQUEST[0], high_n * JUDGE_REQUEST[1]),
                                        (low_n * 20.0, high_n * 120.0)),
                                   prices, 0, (0, 0), batchable=False))
    return found


def _priced(cost: Cost, prices: PriceTable, prefix: int, sets: tuple[int, int], *, batchable: bool) -> Cost:
    """`cost` with its USD filled in (None when the table has no price for the model)."""
    price = prices.price_for(cost.model)
    if price is None:
        cost.plain = cost.cached = cost.batch = None
        return cost
    plain = tuple(price.usd({"input_tokens": i, "output_tokens": o})
                  for i, o in zip(cost.input_tokens, cost.output_tokens, strict=True))
    cached = []
    for requests, inputs, outputs, writes in zip(cost.requests, cost.input_tokens, cost.output_tokens, sets,
                                                 strict=True):
        written = min(writes, requests) * prefix
        read = max(0.0, requests * prefix - written)
        cached.append(price.usd({"input_tokens": max(0.0, inputs - written - read), "cache_write_tokens": written,
                                 "cache_read_tokens": read, "output_tokens": outputs}))
    discount = (1.0 - prices.batch_discount) if batchable else 1.0
    cost.plain = (plain[0], plain[1])
    cost.cached = (cached[0], cached[1])
    cost.batch = (plain[0] * discount, plain[1] * discount)
    return cost


def caching_saves(groups: Iterable[tuple[str, int, int]], prices: PriceTable) -> float:
    """USD a run would have saved with the prompt caching the product asks for, where its endpoint reported none:
    per (model, cacheable prefix tokens, requests) group, the prefix written to the cache by the first request and
    read by every other, instead of sent as input each time."""
    saved = 0.0
    for model, prefix, requests in groups:
        price = prices.price_for(model)
        if price is None or prefix <= 0 or requests < 2:
            continue
        plain = price.usd({"input_tokens": prefix * requests})
        saved += plain - price.usd({"cache_write_tokens": prefix, "cache_read_tokens": prefix * (requests - 1)})
    return saved


def sent_tokens(usage: Mapping[str, Any]) -> int:
    """The input a request (or an episode's requests) sent, however the endpoint billed it: plain, read from the cache
    or written to it."""
    return sum(int(usage.get(kind) or 0) for kind in ("input_tokens", "cache_read_tokens", "cache_write_tokens"))


def shape_from_runs(episodes: Iterable[Mapping[str, Any]], definition_tokens: Sequence[int]) -> EpisodeShape | None:
    """The shape earlier runs of this server measured: per run, the mean turns, the mean input per turn beyond that
    run's definitions and the mean output per turn; low and high over the runs. `episodes`: per run, a mapping with
    `episodes` (stored episode data) — zipped with `definition_tokens`, that run's catalog tokens. None without an
    episode that took a model turn."""
    turns: list[float] = []
    inputs: list[float] = []
    outputs: list[float] = []
    for run, tokens in zip(episodes, definition_tokens, strict=True):
        data = [e for e in run["episodes"] if int(e.get("turns") or 0) > 0 and e.get("usage")]
        if not data:
            continue
        n_turns = sum(int(e["turns"]) for e in data)
        usage = [e["usage"] for e in data]
        sent = sum(sent_tokens(u) for u in usage)
        turns.append(n_turns / len(data))
        inputs.append(max(0.0, sent / n_turns - tokens))
        outputs.append(sum(int(u.get("output_tokens") or 0) for u in usage) / n_turns)
    if not turns:
        return None
    return EpisodeShape(turns=(min(turns), max(turns)), input_per_turn=(min(inputs), max(inputs)),
                        output_per_turn=(min(outputs), max(outputs)),
                        source=f"{len(turns)} earlier run{'s' if len(turns) != 1 else ''} of this server")


def usd_range(r: Range | None) -> str:
    """USD 1.23 – 4.56 (whole dollars past 100); "no price" for None."""
    if r is None:
        return "no price"
    digits = 0 if r[1] >= 100 else 2
    return f"USD {r[0]:,.{digits}f} – {r[1]:,.{digits}f}"


def tokens_range(r: Range) -> str:
    return f"{_short(r[0])} – {_short(r[1])}"


def _short(n: float) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f} M"
    if n >= 10_000:
        return f"{n / 1_000:.0f} k"
    return f"{math.ceil(n):,}"
