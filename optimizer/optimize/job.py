"""The optimize job, in order: baseline on train → rounds of (evidence → propose → screen → search → select) →
baseline and winner on held-out for every model → the gate → (with context servers) baseline and winner on held-out
alone → the outputs. Every evaluation but the last runs beside the context servers, under the client's naming.

Contracts:
- Proposers see evidence from TRAIN episodes only; held-out tasks are evaluated only for the baseline and the
  final winner, after the search has finished.
- Candidates that fail screening (`screening.py`) never reach an eval; they are listed in the summary with the
  reason. A candidate the search mixed from several proposals is screened whole once more before it can be
  selected (`Screen.final`: no text names a tool it does not expose); those that fail are listed too.
- After the gate, the winner and the best other members of the rounds' accuracy-vs-tokens fronts (at most
  `--heldout-candidates`) are scored on held-out too, for the report: to show overfitting, never to select.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from optimizer.cost.estimate import Estimate, Plan, judged
from optimizer.definitions import Candidate, Catalog, apply
from optimizer.gate import judge
from optimizer.lint import findings_as_evidence, lint
from optimizer.optimize.config import OptimizeConfig, gate_settings
from optimizer.optimize.learning import Learned, learn, refused_left
from optimizer.optimize.outputs import split_table, write_outputs
from optimizer.optimize.plan import optimize_plan
from optimizer.optimize.repair import repair_round
from optimizer.optimize.rounds import (
    OptimizeRun,
    Outcome,
    RoundLog,
    Scored,
    Stop,
    propose_cached,
    score,
    search_round,
    select,
    select_smaller,
)
from optimizer.optimize.screening import Screen, accepted_of
from optimizer.optimize.shipping import to_ship
from optimizer.optimize.stopping import Spending, after_round, before_round, nothing_refused
from optimizer.propose import ProposerError, load_proposer
from optimizer.propose.base import Evidence, Proposer
from optimizer.propose.evidence import build_evidence
from optimizer.propose.refusals import ProbeVerdict
from optimizer.run.config import RunError
from optimizer.run.evaluate import Progress
from optimizer.run.harness import Costing, open_harness
from optimizer.tasks import Task, TaskSet

NOTHING_REDUNDANT = ("nothing more the offline proposer can prove redundant (a sentence that repeats the name or "
                     "another sentence, a parameter description that repeats its name or schema, schema metadata a "
                     "model gets nothing from); a Claude --proposer cuts further")
NOTHING_GROUNDED = ("nothing grounded to write: the rules proposer states only what calls showed (validation errors, "
                    "units) and readers call nothing; agents (--models) or a Claude --proposer give it more")


async def run_optimize(
    config: OptimizeConfig | None, *, runs_dir: Path, run_id: str | None = None, resume: str | None = None,
    progress: Progress | None = None, on_start: Callable[[OptimizeRun], None] | None = None,
    overrides: dict[str, Any] | None = None, on_stage: Callable[[str, int | None], None] | None = None,
    on_estimate: Callable[[Estimate, float, Any], None] | None = None,
) -> dict[str, Any]:
    """Run (or resume) an optimization, write its outputs and return summary.json's content. `on_estimate` hears
    the cost estimate before the first paid request (and may stop the run)."""
    async with open_harness(config, OptimizeConfig, runs_dir=runs_dir, run_id=run_id, resume=resume,
                            overrides=overrides, progress=progress,
                            costing=Costing(planned, on_estimate)) as run:
        try:
            proposer = load_proposer(run.config.proposer, run.providers, goal=run.config.goal)
        except ProposerError as exc:
            raise RunError(str(exc)) from None
        if on_start is not None:
            on_start(run)
        if on_stage is not None:
            run.stage = on_stage
        outcome = await optimize(run, proposer)
        data = write_outputs(outcome)
        data["run_dir"] = str(run.store.dir)
        data["notices"] = run.notices
        data["offline_models"] = run.offline
        return data


def planned(config: OptimizeConfig, taskset: TaskSet, in_context: bool) -> Plan:
    """What the run will play (for its cost estimate)."""
    judge, graded = judged(config.judge, config.models, taskset.split("all"))
    return optimize_plan(config, train=len(taskset.split("train")), heldout=len(taskset.split("heldout")),
                         judge=judge, judged=graded, in_context=in_context)


async def optimize(run: OptimizeRun, proposer: Proposer) -> Outcome:
    """Run the rounds on an open run and judge the winner on held-out tasks."""
    config = run.config
    train, heldout = run.taskset.split("train"), run.taskset.split("heldout")
    if not train:
        raise RunError("no train tasks: lower --heldout, or mark fewer tasks `split: heldout`")
    if not heldout:
        raise RunError("no held-out tasks: the gate compares baseline and winner on them; raise --heldout, or mark "
                       "some tasks `split: heldout`")
    screen = Screen(run.catalog, train, allow_leakage=config.allow_leakage, max_tokens=config.max_definition_tokens)
    per_task = len(run.models) * config.epochs
    run.stage("baseline on train", len(train) * per_task)
    spent = _spent(run)
    baseline = best = await score(run, run.candidate, train)
    gate = (_spent(run) - spent) / max(1, len(train) * len(run.models)) * 2 * len(heldout) * per_task
    rounds: list[RoundLog] = []
    front: dict[str, Candidate] = {}
    stop: Stop | None = None
    settled: list[ProbeVerdict] = []
    for number in itertools.count(1):
        last = rounds[-1].spent if rounds else 0.0
        stop = before_round(run, number, best, Spending(_spent(run), last, gate) if run.budget is not None else None)
        if stop:
            break
        learned = await learn(run, best.result.episodes, number)
        settled = learned.verdicts()
        left = refused_left(run, best.result.episodes, settled)
        stop = nothing_refused(run, number, sum(n for row in left.values() for n in row.values()))
        if stop:
            break
        log = RoundLog(round=number, proposed=0, probes=[p.to_json() for p in learned.probes],
                       probing_stopped=learned.stopped, refused_at_start=left)
        rounds.append(log)
        chosen, stop = await one_round(run, proposer, screen, log, baseline, best, learned, front)
        if chosen.candidate.key != best.candidate.key:
            best = chosen
            log.improved = True
        if stop:
            break
    assert stop is not None
    left = refused_left(run, best.result.episodes, settled)
    run.stage("held-out gate: baseline and winner", 2 * len(heldout) * per_task)
    before = await run.evaluate(baseline.candidate, heldout, epochs=config.epochs)
    after = await run.evaluate(best.candidate, heldout, epochs=config.epochs)
    max_drop, margin = gate_settings(config)
    passed, verdicts = judge(run.model_ids, before.episodes, after.episodes, max_drop=max_drop,
                             alpha=config.alpha, seed=config.seed, margin=margin,
                             fail_on_inconclusive=config.fail_on == "inconclusive")
    alone = None
    if run.context:  # chosen in context; say how it does where the server stands alone too (not used to choose)
        alone = (await run.evaluate(baseline.candidate, heldout, epochs=config.epochs, alone=True),
                 await run.evaluate(best.candidate, heldout, epochs=config.epochs, alone=True))
    rescored = sum(key != best.candidate.key for key in front) if config.heldout_candidates > 1 else 0
    run.stage("held-out: the best candidates (not used to select)",  # train scores and the winner: from the cache
              (rescored * len(train) + (1 + min(config.heldout_candidates - 1, rescored)) * len(heldout)) * per_task)
    candidates = await heldout_candidates(run, front, best, train, heldout)
    return Outcome(run, config, baseline, best, before, after, passed, verdicts, rounds, stop.text,
                   dict(run.episodes), alone, candidates, stop=stop, refused_left=left,
                   shipped=to_ship(baseline, best, before, after, run.model_ids))


async def one_round(run: OptimizeRun, proposer: Proposer, screen: Screen, log: RoundLog, baseline: Scored,
                    best: Scored, learned: Learned, front: dict[str, Candidate]) -> tuple[Scored, Stop | None]:
    """One round from `best`: evidence → propose → screen (and repair) → search → select. Fills `log` and `front`
    (the search's accuracy-vs-tokens front); returns the round's pick (`best` when nothing beats it) and why no
    round should follow, or None."""
    config, train = run.config, run.taskset.split("train")
    started = _spent(run)
    evidence = evidence_for(run, best, learned)
    proposals, report = await propose_cached(run, proposer, best.candidate, evidence, k=config.candidates,
                                             seed=config.seed + log.round)
    screened = screen.screen(proposals, evidence)
    repaired, repair = await repair_round(run, proposer, screen, screened, best.candidate, evidence)
    accepted = accepted_of(repaired)
    first = {id(s) for s in screened}
    log.proposed = len(proposals)
    log.rejected = [*(entry for s in screened for entry in s.rejections()),
                    *({**entry, "after_repair": "yes"} for s in repaired if id(s) not in first
                      for entry in s.rejections())]
    log.proposer = {**report, "screening_repair": repair} if repair else report
    if not accepted:
        silent = NOTHING_REDUNDANT if config.goal == "shrink" else NOTHING_GROUNDED
        error = log.proposer.get("error")
        return best, (Stop("proposer-error", error) if error else
                      Stop("no-candidates", silent if proposer.offline and not proposals
                           else "no valid candidates were proposed"))
    per_task = len(run.models) * config.epochs
    run.stage(f"round {log.round}: search ({config.trials} trials at most)", config.trials * len(train) * per_task)
    searched, unfit = screen.shippable(await search_round(run, log.round, best, accepted, train, log))
    log.unfit = [{"candidate": key, "reason": why} for key, why in unfit.items()]
    if searched is None:
        return best, Stop("unfit", "no candidate the search made passed the final screen")
    front.update({member.candidate.key: member.candidate for member in searched.front})
    chosen = (await select_smaller(run, searched, baseline, best, train, log) if config.goal == "shrink"
              else await select(run, searched, best, train, log))
    log.spent = _spent(run) - started
    return chosen, after_round(run, best, chosen)


async def heldout_candidates(run: OptimizeRun, front: dict[str, Candidate], winner: Scored, train: list[Task],
                             heldout: list[Task]) -> list[dict[str, Any]]:
    """The winner, then the front members with the best train accuracy (fewer tokens first on ties), at most
    `heldout_candidates` in all, each with per-model accuracy on train (from the store) and on held-out."""
    limit = run.config.heldout_candidates
    others = [await score(run, candidate, train) for key, candidate in front.items()
              if key != winner.candidate.key] if limit > 1 else []
    chosen = [winner, *sorted(others, key=lambda s: (-s.accuracy, s.tokens))[:limit - 1]]
    out = []
    for scored in chosen:
        held = await run.evaluate(scored.candidate, heldout, epochs=run.config.epochs)
        out.append({"id": scored.candidate.key, "train": split_table(scored.result, run.model_ids),
                    "heldout": split_table(held, run.model_ids), "tokens": scored.tokens,
                    "selected": scored is winner})
    return out


def evidence_for(run: OptimizeRun, best: Scored, learned: Learned) -> Evidence:
    """What the proposer may read: the best candidate's train episodes, what the server accepted and refused over the
    whole run (the ledger) and the lint findings of the best candidate's definitions."""
    exposed = apply(run.catalog, best.candidate)
    findings = findings_as_evidence(lint(Catalog(run.catalog.server_name, exposed.tools)))
    tasks = {t.id: t for t in run.taskset.tasks}
    return build_evidence(best.result.episodes, tasks, token_budget=run.config.evidence_tokens, lint=findings,
                          seed=run.config.seed, ledger=learned.ledger)


def _spent(run: OptimizeRun) -> float:
    return run.budget.spent if run.budget is not None else 0.0
