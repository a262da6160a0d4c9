"""The optimize verb, wired: choose the proposer, screen its candidates (apply, lint, leakage), build
evidence from train episodes, run the loop, write the outputs."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from optimizer.definitions import Candidate, Catalog, apply
from optimizer.evaluate import Progress
from optimizer.loop import OptimizeConfig, Scored, check_candidate, open_optimize_run, optimize
from optimizer.models import CLAUDE_PROPOSER, CLAUDE_TASK_MODELS, is_claude, is_offline
from optimizer.propose.base import Evidence, Proposer
from optimizer.propose.evidence import build_evidence
from optimizer.run import OpenRun, RunError
from optimizer.tasks import Task

OFFLINE_MODELS = ("sim:lexical", "sim:skim")


def default_models(*, offline: bool, models: Sequence[str] | None) -> tuple[str, ...]:
    """The models to use: as given; the offline agents with --offline; else stop with what to do."""
    if models:
        return tuple(models)
    if offline:
        return OFFLINE_MODELS
    if os.environ.get("ANTHROPIC_API_KEY"):
        return CLAUDE_TASK_MODELS
    raise RunError("no models to evaluate with: set ANTHROPIC_API_KEY to use Claude, or pass --offline to run "
                   "with the simulated agents (sim:lexical,sim:skim) and the rules proposer.")


def default_proposer(*, offline: bool, proposer: str | None) -> str:
    """The proposer: as given; rules with --offline or without a key; else Claude."""
    if proposer:
        return proposer
    return "rules" if offline or not os.environ.get("ANTHROPIC_API_KEY") else CLAUDE_PROPOSER


def load_proposer(name: str, run: OpenRun) -> Proposer:
    """The proposer a name gives: `rules`, or a Claude model sharing the run's API client."""
    if name == "rules":
        from optimizer.propose.rules import RulesProposer

        return RulesProposer()
    if is_claude(name):
        from optimizer.models.anthropic import AnthropicClient
        from optimizer.models.defaults import check_model_name
        from optimizer.propose.claude import ClaudeProposer

        model = name.removeprefix("anthropic:")
        try:
            check_model_name(model)
        except ValueError as exc:
            raise RunError(f"--proposer: {exc}") from None
        client = next((m.client for m in run.models if isinstance(getattr(m, "client", None), AnthropicClient)),
                      None) or AnthropicClient(max_connections=run.config.max_connections)
        return ClaudeProposer(model, client)
    raise RunError(f"unknown proposer {name!r}: use rules (offline) or a Claude model such as {CLAUDE_PROPOSER}")


def _edited_texts(catalog: Catalog, candidate: Candidate) -> list[str]:
    texts = []
    for name, edit in candidate.edits.items():
        if edit.description is not None and edit.description != catalog.get(name).description:
            texts.append(edit.description)
        texts.extend(edit.parameters.values())
        if edit.name:
            texts.append(edit.name)
    return texts


class Screen:
    """Rejects candidates before any eval: ones that do not apply, write unsafe text (safety.py), add lint
    errors, or leak train text."""

    def __init__(self, catalog: Catalog, train: Sequence[Task], *, allow_leakage: bool) -> None:
        self.catalog = catalog
        self.prompts = [t.prompt for t in train]
        self.allow_leakage = allow_leakage

    def __call__(self, proposals: Sequence[Candidate]) -> tuple[list[Candidate], list[dict[str, str]]]:
        accepted: list[Candidate] = []
        rejected: list[dict[str, str]] = []
        for candidate in proposals:
            reason = self.reason(candidate)
            if reason is None:
                accepted.append(candidate)
            else:
                rejected.append({"candidate": candidate.key, "reason": reason})
        return accepted, rejected

    def reason(self, candidate: Candidate) -> str | None:
        problem = check_candidate(self.catalog, candidate)
        if problem:
            return problem
        from optimizer.lint import new_errors
        from optimizer.propose.leakage import leaked_phrases
        from optimizer.propose.safety import unsafe_reasons

        unsafe = unsafe_reasons(self.catalog, candidate)
        if unsafe:  # rejected even with --allow-leakage
            return "unsafe text: " + "; ".join(unsafe[:3])

        errors = new_errors(self.catalog, apply(self.catalog, candidate).tools)
        if errors:
            return "adds lint errors: " + "; ".join(f"{e.tool or 'server'}: {e.rule}" for e in errors[:5])
        texts = _edited_texts(self.catalog, candidate)
        leaks = sorted({p for text in texts for p in leaked_phrases(text, self.prompts)})
        if leaks and not self.allow_leakage:
            return "copies text from train prompts: " + ", ".join(repr(p) for p in leaks[:5])
        return None


def evidence_builder(run: OpenRun, config: OptimizeConfig) -> Any:
    tasks = {t.id: t for t in run.taskset.tasks}

    def evidence_for(best: Scored) -> Evidence:
        from optimizer.lint import findings_as_evidence, lint

        exposed = apply(run.catalog, best.candidate)
        findings = findings_as_evidence(lint(Catalog(run.catalog.server_name, exposed.tools)))
        return build_evidence(best.result.episodes, tasks, token_budget=config.evidence_tokens,
                              lint=findings, seed=config.seed)

    return evidence_for


async def run_optimize(
    config: OptimizeConfig | None, *, runs_dir: Path, run_id: str | None = None, resume: str | None = None,
    progress: Progress | None = None, on_start: Any = None, overrides: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Run (or resume) an optimization and return summary.json's content."""
    from optimizer.report import write_outputs

    async with open_optimize_run(config, runs_dir=runs_dir, run_id=run_id, resume=resume,
                                 overrides=overrides) as run:
        cfg: OptimizeConfig = run.config  # type: ignore[assignment]
        proposer = load_proposer(cfg.proposer, run)
        shared = {id(getattr(m, "client", None)) for m in run.models}
        own_client = getattr(proposer, "client", None)
        try:
            return await _optimize_and_write(run, cfg, proposer, progress, on_start, write_outputs)
        finally:
            if own_client is not None and id(own_client) not in shared:
                await own_client.close()


async def _optimize_and_write(
    run: OpenRun, cfg: OptimizeConfig, proposer: Proposer, progress: Progress | None, on_start: Any,
    write_outputs: Any,
) -> dict[str, Any]:
    if on_start is not None:
        on_start(run)
    screen = Screen(run.catalog, run.taskset.split("train"), allow_leakage=cfg.allow_leakage)
    outcome = await optimize(run, proposer, screen=screen, evidence_for=evidence_builder(run, cfg),
                             progress=progress)
    data = write_outputs(outcome)
    data["run_dir"] = str(run.store.dir)
    data["notices"] = run.notices
    data["offline_models"] = all(is_offline(m) for m in run.models)
    return data
