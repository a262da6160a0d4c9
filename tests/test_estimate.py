"""What a run will cost, said before it spends (optimizer/cost/estimate.py, optimize/plan.py, cli/costs.py): the
estimate's parts on a server, `--dry-run` with no key (nothing sent, no run kept), the confirmation (a run nobody
can confirm stops with exit 2 before its first request; an interactive one asks), and the estimate kept beside the
actual cost."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fakes.anthropic_api import FakeAnthropicAPI, SimPolicy

from optimizer.cost.estimate import DEFAULT_SHAPE, Phase, Plan, caching_saves, estimate, eval_plan, shape_from_runs
from optimizer.cost.prices import PriceTable
from optimizer.files.store import StoredEpisode
from optimizer.optimize.config import ROUNDS_CAP, OptimizeConfig
from optimizer.optimize.outputs import cacheable_groups
from optimizer.optimize.plan import optimize_plan
from optimizer.run.config import EvalConfig, RunError

ROOT = Path(__file__).resolve().parent.parent
SUPPORT = f"{sys.executable} {ROOT / 'examples/support/server.py'}"
POLICIES = 6
"""tasks in the support example's policies.yaml: the few a paid run needs to show its estimate and its gate"""


def few_tasks(directory: Path) -> Path:
    tasks = directory / "tasks"
    tasks.mkdir()
    shutil.copy(ROOT / "examples" / "support" / "tasks" / "policies.yaml", tasks)
    return tasks
KEY = "sk-ant-test-0123456789abcdef"
NO_KEY = {"ANTHROPIC_API_KEY": None, "ANTHROPIC_BASE_URL": None}
Cli = Callable[..., Any]


def test_the_optimize_plan_counts_every_phase_from_the_settings() -> None:
    config = OptimizeConfig(server="x", tasks="t", models=("claude-haiku-5-5", "claude-sonnet-5-5"), trials=8,
                            chunks=3, candidates=4, heldout_candidates=2, proposer="claude-opus-5-5")
    plan = optimize_plan(config, train=30, heldout=12)
    phases = {p.name.split(":")[0]: p.episodes for p in plan.phases}
    assert phases["baseline on train"] == (30, 30)
    assert phases["search"] == (4 * 10, ROUNDS_CAP * 8 * 30)  # whole proposals on the first chunk .. every trial
    assert phases["held-out gate"] == (24, 24)
    assert phases["held-out candidates (not used to select)"] == (0, 1 * (30 + 12))
    assert plan.episodes() == tuple(2 * sum(p.episodes[i] for p in plan.phases) for i in (0, 1))
    assert plan.proposer_requests == (1, 2 * ROUNDS_CAP)
    two = optimize_plan(config.model_copy(update={"rounds": 2}), train=30, heldout=12)
    assert two.phases[1].episodes[1] == 2 * 8 * 30 and not two.notes
    offline = optimize_plan(config.model_copy(update={"proposer": "rules"}), train=30, heldout=12)
    assert offline.proposer is None and offline.proposer_requests == (0, 0)


def test_the_estimate_prices_tokens_per_model_with_caching_and_batch() -> None:
    prices = PriceTable.default()
    plan = eval_plan("eval", ["claude-sonnet-5-5", "reader:bm25"], tasks=10)
    found = estimate(plan, DEFAULT_SHAPE, prices, definition_tokens=2_000, system_tokens=500)
    (agent,) = found.costs  # the offline reader costs nothing and is not listed
    assert agent.model == "claude-sonnet-5-5" and agent.requests == (20.0, 40.0)
    assert agent.input_tokens[0] == 20 * (2_000 + DEFAULT_SHAPE.input_per_turn[0])
    assert agent.plain is not None and agent.cached is not None and agent.batch is not None
    assert agent.cached[0] < agent.plain[0] and agent.cached[1] < agent.plain[1]  # one write, the rest read
    assert agent.batch[1] == pytest.approx(agent.plain[1] * (1 - prices.batch_discount))
    assert found.total() == agent.plain
    unknown = estimate(eval_plan("eval", ["openai:local-model"], tasks=3), DEFAULT_SHAPE, prices,
                       definition_tokens=100)
    assert unknown.unpriced() == ["openai:local-model"] and unknown.total() == (0.0, 0.0)


def test_caching_never_saves_more_than_the_requests_sent() -> None:
    """A search's candidates the run does not list are priced with the baseline's definitions; where they were
    smaller (a shrink), the cacheable prefix is capped at what each request sent, so the saving stays below the input
    paid."""
    def episode(candidate: str, input_tokens: int) -> StoredEpisode:
        return StoredEpisode(key=f"{candidate}-{input_tokens}", model="claude-sonnet-5-5", task_id="t", split="train",
                             candidate=candidate, epoch=0, status="ok", passed=True,
                             data={"turns": 2, "usage": {"input_tokens": input_tokens, "output_tokens": 50}})
    episodes = [episode("small", 2 * 5_000), episode("small", 2 * 6_000), episode("base", 2 * 9_500)]
    groups = cacheable_groups(episodes, lambda candidate: 9_000)
    assert sorted(groups) == [("claude-sonnet-5-5", 5_000, 4), ("claude-sonnet-5-5", 9_000, 2)]
    prices = PriceTable.default()
    paid = prices.usd("claude-sonnet-5-5", {"input_tokens": 2 * 5_000 + 2 * 6_000 + 2 * 9_500}) or 0.0
    assert 0 < caching_saves(groups, prices) < paid


def test_earlier_runs_give_their_own_episode_shape() -> None:
    runs = [{"episodes": [{"turns": 2, "usage": {"input_tokens": 3_000, "output_tokens": 100}},
                          {"turns": 4, "usage": {"input_tokens": 5_000, "cache_read_tokens": 1_000,
                                                 "output_tokens": 300}}]},
            {"episodes": [{"turns": 0, "reading": {}}]}]  # a reader's run: no turns, nothing measured
    shape = shape_from_runs(runs, [1_000, 50])
    assert shape is not None and shape.turns == (3.0, 3.0)
    assert shape.input_per_turn == (9_000 / 6 - 1_000,) * 2 and shape.output_per_turn == (400 / 6,) * 2
    assert "1 earlier run" in shape.source
    assert shape_from_runs([], []) is None


def test_dry_run_with_no_key_prints_the_plan_and_sends_nothing(run_cli: Cli, tmp_path: Path) -> None:
    tasks = few_tasks(tmp_path)
    result = run_cli("--server", SUPPORT, "--tasks", str(tasks), "--dry-run", "--json", "--runs-dir",
                     str(tmp_path / "runs"), script="optimize", env=NO_KEY)
    assert result.returncode == 0, result.stderr[-3000:]
    plan = json.loads(result.stdout)
    assert plan["dry_run"] and plan["models"] == ["claude-haiku-5-5", "claude-sonnet-5-5"]
    assert plan["proposer"] == "claude-opus-5-5" and plan["definition_tokens"] > 0
    found = plan["estimate"]
    assert found["tasks"]["train"] + found["tasks"]["heldout"] == POLICIES
    assert [m["role"] for m in found["models"]] == ["agent", "agent", "proposer"]
    low, high = found["usd"]
    assert 0 < low < high and found["usd_cached"][1] < high and found["usd_batch"][1] < high
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())  # no run kept
    words = run_cli("eval", "--server", SUPPORT, "--tasks", str(tasks), "--dry-run", "--runs-dir",
                    str(tmp_path / "runs"), env=NO_KEY)
    assert words.returncode == 0 and "nothing to pay (offline models only)" in words.stdout


def test_a_run_nobody_can_confirm_stops_before_its_first_request(run_cli: Cli, tmp_path: Path) -> None:
    tasks = few_tasks(tmp_path)
    with FakeAnthropicAPI(SimPolicy("lexical")) as api:
        paid = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.base_url, "OPTIMIZER_CONFIRM_USD": "0.01"}
        refused = run_cli("eval", "--server", SUPPORT, "--tasks", str(tasks), "--models", "claude-haiku-5-5",
                          "--runs-dir", str(tmp_path / "runs"), env=paid)
        sent_before = [r for r in api.requests if r.get("messages")]
        allowed = run_cli("eval", "--server", SUPPORT, "--tasks", str(tasks), "--models", "claude-haiku-5-5",
                          "--max-usd", "5", "--runs-dir", str(tmp_path / "runs"), "--run-id", "capped", "--json",
                          env=paid)
    assert refused.returncode == 2 and "--max-usd" in refused.stderr and "confirm_usd" in refused.stderr
    assert "cost estimate" in refused.stderr and sent_before == []
    assert allowed.returncode == 0, allowed.stderr[-3000:]
    report = json.loads(allowed.stdout)
    assert report["estimate"]["command"] == "eval" and report["estimate"]["usd"][1] > 0


@pytest.mark.parametrize("answer", [True, False])
def test_an_interactive_run_asks_before_passing_the_threshold(answer: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    from rich.console import Console

    from optimizer.cli import costs

    asked: list[str] = []
    monkeypatch.setattr(costs.typer, "confirm", lambda text, **_: asked.append(text) or answer)
    plan = Plan("eval", (Phase("eval", (100, 100)),), ("claude-sonnet-5-5",))
    found = estimate(plan, DEFAULT_SHAPE, PriceTable.default(), definition_tokens=5_000)
    config = EvalConfig(server="x", tasks="t", models=("claude-sonnet-5-5",), confirm_usd=0.01)
    announce = costs.on_estimate(Console(file=open("/dev/null", "w")), dry_run=False, as_json=False,  # noqa: SIM115
                                 interactive=True)
    if answer:
        announce(found, 0.0, config)
    else:
        with pytest.raises(RunError, match="not confirmed"):
            announce(found, 0.0, config)
    assert len(asked) == 1 and "may cost up to USD" in asked[0]
    announce(found, 0.0, config.model_copy(update={"confirm_usd": 1e6}))  # under the threshold: nobody is asked
    announce(found, 0.0, config.model_copy(update={"replay": "somewhere"}))  # a replay pays nothing
    assert len(asked) == 1
