"""The one gate `optimize` and `regress` share: paired per task, Holm across models, the same wording."""

from __future__ import annotations

from optimizer.files.store import StoredEpisode
from optimizer.gate import judge, outcomes_by_task


def episodes(side: str, model: str, passed: dict[str, list[bool]]) -> list[StoredEpisode]:
    return [StoredEpisode(f"{side}-{model}-{task}-{epoch}", model, task, "heldout", side, epoch, "completed", ok, {})
            for task, runs in passed.items() for epoch, ok in enumerate(runs)]


def flips(n_tasks: int, down: int) -> tuple[dict[str, list[bool]], dict[str, list[bool]]]:
    """`n_tasks` tasks that all pass before; `down` of them fail after."""
    before = {f"t{i:02d}": [True] for i in range(n_tasks)}
    after = {task: [i >= down] for i, task in enumerate(before)}
    return before, after


def test_outcomes_by_task_orders_epochs_and_keeps_one_model() -> None:
    eps = episodes("a", "m", {"t1": [True, False]}) + episodes("a", "other", {"t1": [False]})
    assert outcomes_by_task(reversed(eps), "m") == {"t1": [True, False]}


def test_no_change_passes_every_model() -> None:
    before, after = flips(10, 0)
    passed, verdicts = judge(["m1", "m2"], episodes("a", "m1", before) + episodes("a", "m2", before),
                             episodes("b", "m1", after) + episodes("b", "m2", after))
    assert passed and [v.reason for v in verdicts] == ["no regression", "no regression"]


def test_any_drop_fails_at_max_drop_zero_but_not_without_a_margin() -> None:
    before, after = flips(10, 1)
    passed, [verdict] = judge(["m"], episodes("a", "m", before), episodes("b", "m", after), max_drop=0.0)
    assert not passed and verdict.delta == -0.1 and "dropped 10.0 pts (more than --max-drop 0.0 pts)" in verdict.reason
    passed, [verdict] = judge(["m"], episodes("a", "m", before), episodes("b", "m", after), max_drop=None)
    assert passed and verdict.p_value > 0.05 and verdict.flipped_down == ("t00",)


def test_significance_is_read_after_holm_across_models() -> None:
    """Six of 20 tasks flip down on each of two models: McNemar p = 2/64 ≈ 0.031 alone, but Holm doubles the
    smaller one to 0.0625 — not significant at 0.05 with two models, significant with one."""
    before, after = flips(20, 6)
    one = judge(["m1"], episodes("a", "m1", before), episodes("b", "m1", after), max_drop=None)
    assert not one[0] and one[1][0].p_holm == one[1][0].p_value < 0.05
    both = judge(["m1", "m2"], episodes("a", "m1", before) + episodes("a", "m2", before),
                 episodes("b", "m1", after) + episodes("b", "m2", after), max_drop=None)
    assert both[0] and all(v.p_holm > v.p_value and v.p_holm >= 0.05 for v in both[1])


def test_a_model_without_shared_tasks_fails_the_gate() -> None:
    before, after = flips(5, 0)
    passed, [verdict] = judge(["m"], episodes("a", "m", before), episodes("b", "other", after))
    assert not passed and verdict.n_tasks == 0 and verdict.reason == "no task scored on both sides"


def test_verdict_json_has_the_stable_keys() -> None:
    before, after = flips(4, 1)
    _, [verdict] = judge(["m"], episodes("a", "m", before), episodes("b", "m", after))
    assert set(verdict.to_json()) == {"n_tasks", "before", "after", "delta", "p_value", "p_holm", "method", "ci",
                                      "passed", "reason", "flipped_up", "flipped_down", "verdict", "detectable_drop",
                                      "underpowered", "tasks_needed", "drop_upper", "p_noninferior", "failed_calls"}
    calls = verdict.to_json()["failed_calls"]  # these episodes call nothing: no change, never raised
    assert calls["before"] == calls["after"] == calls["delta"] == 0 and not calls["raised"]


def rotation(n_tasks: int = 36, down: int = 4) -> tuple[list[StoredEpisode], list[StoredEpisode]]:
    """Two models, each losing `down` of `n_tasks` tasks (half of them passing before), none gained."""
    before = {f"t{i:02d}": [i % 2 == 0] for i in range(n_tasks)}
    after = {t: [ok and i >= 2 * down] for i, (t, [ok]) in enumerate(before.items())}
    models = ("m1", "m2")
    return ([e for m in models for e in episodes("a", m, before)], [e for m in models for e in episodes("b", m, after)])


def test_a_drop_too_small_for_the_task_set_passes_but_is_called_underpowered() -> None:
    before, after = rotation()
    passed, verdicts = judge(["m1", "m2"], before, after, max_drop=None)
    assert passed and all(v.delta == -4 / 36 and v.verdict == "pass" and v.underpowered for v in verdicts)
    # 36 tasks, alpha 0.05 / 2 models: at least 7 tasks must flip one way, and 80% power needs more
    assert all(v.detectable_drop is not None and 7 / 36 < v.detectable_drop < 0.35 for v in verdicts)
    assert all(v.tasks_needed is not None and v.tasks_needed > 36 for v in verdicts)


def test_a_margin_turns_the_same_drop_into_a_regression_and_proves_a_small_one_harmless() -> None:
    before, after = rotation()
    passed, verdicts = judge(["m1", "m2"], before, after, max_drop=None, margin=0.05)
    assert not passed and {v.verdict for v in verdicts} == {"regressed"}
    assert "at least the margin" in verdicts[0].reason
    many_before, many_after = rotation(400, 1)  # 1 of 400 lost: a 5-point drop is ruled out
    passed, verdicts = judge(["m1", "m2"], many_before, many_after, max_drop=None, margin=0.05)
    assert passed and all(v.verdict == "pass" and v.drop_upper is not None and v.drop_upper < 0.05 for v in verdicts)


def test_inconclusive_fails_only_when_asked() -> None:
    before, after = rotation(36, 2)  # a 5.6-point drop on 36 tasks: neither a regression nor shown harmless
    passed, verdicts = judge(["m1", "m2"], before, after, max_drop=None, margin=0.10)
    assert passed and {v.verdict for v in verdicts} == {"inconclusive"} and "not ruled out" in verdicts[0].reason
    failed, _ = judge(["m1", "m2"], before, after, max_drop=None, margin=0.10, fail_on_inconclusive=True)
    assert not failed


def test_optimize_report_and_regress_markdown_word_the_gate_the_same() -> None:
    from optimizer.gate import rule
    from optimizer.optimize.report_md import _gate_section
    from optimizer.regress.outputs import markdown

    before, after = flips(10, 1)
    passed, verdicts = judge(["m"], episodes("a", "m", before), episodes("b", "m", after), max_drop=0.0)
    rows = {v.model: v.to_json() for v in verdicts}
    report = "\n".join(_gate_section({"gate": {"passed": passed, "max_drop": 0.0, "alpha": 0.05, "models": rows}}))
    pr = markdown({"passed": passed, "offline": True, "models": ["m"], "max_drop": 0.0, "alpha": 0.05,
                   "split": "heldout", "epochs": 1, "results": rows})
    for text in (report, pr):
        assert rule(0.0, 0.05) in text and f"FAIL: {verdicts[0].reason}" in text
        assert "Underpowered for m" in text and "can see" in text
