"""Model prices (optimizer/cost/prices.py, optimizer/cost/prices.json) and the run cost in summary.json / report.md."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from optimizer.cost.prices import FREE, ModelPrice, PriceError, PriceTable, load_prices
from optimizer.files.store import StoredEpisode
from optimizer.optimize.outputs import cost
from optimizer.optimize.report_md import _cost_section

USAGE = {"input_tokens": 12_000, "output_tokens": 3_000, "cache_read_tokens": 40_000, "cache_write_tokens": 8_000}
# claude-sonnet-5-5 at 3 / 15 / 3.75 (cache write) / 0.3 (cache read) USD per million tokens:
# 12,000 * 3 = 36,000; 3,000 * 15 = 45,000; 8,000 * 3.75 = 30,000; 40,000 * 0.3 = 12,000 -> 123,000 / 1e6
SONNET_USD = 0.123


def episode(model: str, usage: dict[str, int], *, batch: bool | None = None, key: str = "") -> StoredEpisode:
    data: dict[str, Any] = {"prompt": "p", "answer": "", "verdict": {"passed": True, "reason": ""}, "calls": [],
                            "usage": usage}
    if batch is not None:
        data["batch"] = batch
    return StoredEpisode(key or f"t-{model}-{batch}", model, "t", "train", "base", 0, "completed", True, data)


def write(tmp_path: Path, data: Any, name: str = "prices.json") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def test_default_table_has_the_claude_5_5_models_at_list_prices() -> None:
    table = PriceTable.default()
    assert table.batch_discount == 0.5
    assert table.price_for("claude-haiku-5-5") == ModelPrice(1.0, 5.0, 1.25, 0.1)
    assert table.price_for("claude-sonnet-5-5") == ModelPrice(3.0, 15.0, 3.75, 0.3)
    assert table.price_for("claude-opus-5-5") == ModelPrice(5.0, 25.0, 6.25, 0.5)
    for name in ("claude-haiku-4-5", "claude-sonnet-4-5", "claude-opus-4-5"):
        assert table.price_for(name) is not None
    for price in table.models.values():  # cache writes 1.25x input, cache reads 0.1x input
        assert price.cache_write == pytest.approx(1.25 * price.input)
        assert price.cache_read == pytest.approx(0.1 * price.input)


def test_model_ids_are_normalised_before_lookup() -> None:
    table = PriceTable.default()
    haiku = table.price_for("claude-haiku-5-5")
    assert table.price_for("anthropic:claude-haiku-5-5") == haiku
    assert table.price_for("anthropic:claude-haiku-5-5?thinking=adaptive&max_tokens=2000") == haiku
    assert table.price_for("claude-haiku-4-5-20251001") == table.price_for("claude-haiku-4-5")


def test_usd_of_a_concrete_usage() -> None:
    table = PriceTable.default()
    assert table.usd("claude-sonnet-5-5", USAGE) == pytest.approx(SONNET_USD)
    # haiku: 12,000 * 1 + 3,000 * 5 + 8,000 * 1.25 + 40,000 * 0.1 = 12,000 + 15,000 + 10,000 + 4,000 = 41,000
    assert table.usd("anthropic:claude-haiku-5-5", USAGE) == pytest.approx(0.041)
    assert table.usd("claude-opus-5-5", {"output_tokens": 1_000_000}) == pytest.approx(25.0)  # missing keys are 0
    assert table.usd("claude-opus-5-5", {}) == 0.0


def test_batch_discount_halves_every_price() -> None:
    table = PriceTable.default()
    assert table.usd("claude-sonnet-5-5", USAGE, batch=True) == pytest.approx(SONNET_USD / 2)


def test_sim_models_are_free_and_unknown_models_have_no_price() -> None:
    table = PriceTable.default()
    assert table.price_for("sim:lexical") == FREE
    assert table.usd("sim:skim?seed=3&noise=0.2", USAGE) == 0.0
    assert table.price_for("gpt-9") is None
    assert table.usd("gpt-9", USAGE) is None
    assert table.usd("openai:claude-haiku-5-5", USAGE) is None  # only the anthropic: prefix is dropped


def test_a_user_price_file_overrides_the_models_it_names_and_keeps_the_others(tmp_path: Path) -> None:
    path = write(tmp_path, {"_note": "negotiated", "models": {
        "anthropic:claude-sonnet-5-5": {"input": 2, "output": 10, "cache_write": 2.5, "cache_read": 0.2},
        "my-model": {"input": 0, "output": 1, "cache_write": 0, "cache_read": 0}}})
    table = load_prices(path)
    assert table.price_for("claude-sonnet-5-5") == ModelPrice(2.0, 10.0, 2.5, 0.2)
    assert table.price_for("claude-haiku-5-5") == PriceTable.default().price_for("claude-haiku-5-5")
    assert table.usd("my-model", {"output_tokens": 2_000_000}) == pytest.approx(2.0)
    assert table.batch_discount == 0.5  # kept from the built-in table
    assert str(path) in table.source
    assert load_prices(write(tmp_path, {"batch_discount": 0.25, "models": {}}, "b.json")).batch_discount == 0.25


@pytest.mark.parametrize(("data", "names"), [
    ({"models": {"claude-haiku-5-5": {"input": 1, "output": 5, "cache_write": 1.25}}},
     ["claude-haiku-5-5", "cache_read", "missing"]),
    ({"models": {"claude-haiku-5-5": {"input": 1, "output": -5, "cache_write": 1.25, "cache_read": 0.1}}},
     ["claude-haiku-5-5.output", ">= 0", "-5"]),
    ({"models": {"m": {"input": "1", "output": 5, "cache_write": 1.25, "cache_read": 0.1}}}, ["m.input", "number"]),
    ({"models": {"m": {"input": 1, "ouput": 5, "cache_write": 1.25, "cache_read": 0.1}}}, ["models.m", "ouput"]),
    ({"models": {"m": [1, 5]}}, ["models.m", "object"]),
    ({"models": {}, "batch_discount": 2}, ["batch_discount", "between 0 and 1"]),
    ({"modles": {}}, ["modles", "unknown"]),
    ({"batch_discount": 0.5}, ["models", "missing"]),
    ({"models": {"sim:lexical": {"input": 1, "output": 5, "cache_write": 1.25, "cache_read": 0.1}}},
     ["sim:lexical", "offline"]),
    ("[1, 2]", ["JSON object"]),
    ('{"models": {', ["not valid JSON", "line 1"]),
])
def test_a_bad_price_file_names_the_file_and_the_entry(tmp_path: Path, data: Any, names: list[str]) -> None:
    path = write(tmp_path, data, "my-prices.json")
    with pytest.raises(PriceError) as info:
        load_prices(path)
    message = str(info.value)
    assert str(path) in message
    for name in names:
        assert name in message, message


def test_a_missing_price_file_is_a_price_error(tmp_path: Path) -> None:
    with pytest.raises(PriceError, match="nope.json"):
        load_prices(tmp_path / "nope.json")


def test_cost_sums_tokens_and_usd_per_model_with_batch_and_unpriced_models() -> None:
    episodes = [
        episode("anthropic:claude-sonnet-5-5", USAGE, key="a"),
        episode("anthropic:claude-sonnet-5-5", USAGE, batch=True, key="b"),
        episode("claude-haiku-5-5", {"input_tokens": 1_000_000, "output_tokens": 100_000}, key="c"),
        episode("sim:lexical", {"input_tokens": 500, "output_tokens": 50}, key="d"),
        episode("gpt-9", {"input_tokens": 7, "output_tokens": 3}, key="e"),
        StoredEpisode("f", "sim:skim", "t", "train", "base", 0, "infra_error", False, {}),  # no usage at all
    ]
    c = cost(episodes)
    assert c["input_tokens"] == 2 * 12_000 + 1_000_000 + 500 + 7
    assert c["output_tokens"] == 2 * 3_000 + 100_000 + 50 + 3
    assert c["cache_read_tokens"] == 2 * 40_000 and c["cache_write_tokens"] == 2 * 8_000
    haiku = 1_000_000 * 1 / 1e6 + 100_000 * 5 / 1e6  # 1.0 + 0.5
    assert c["usd"] == pytest.approx(SONNET_USD * 1.5 + haiku)
    assert c["by_model"]["anthropic:claude-sonnet-5-5"]["usd"] == pytest.approx(SONNET_USD * 1.5)
    assert c["by_model"]["claude-haiku-5-5"] == {"input_tokens": 1_000_000, "output_tokens": 100_000,
                                                 "cache_read_tokens": 0, "cache_write_tokens": 0, "usd": 1.5,
                                                 "priced": True}
    assert c["by_model"]["sim:lexical"]["usd"] == 0.0 and c["by_model"]["sim:lexical"]["priced"] is True
    assert c["by_model"]["gpt-9"]["usd"] == 0.0 and c["by_model"]["gpt-9"]["priced"] is False
    assert c["unpriced_models"] == ["gpt-9"]
    assert c["batch_episodes"] == 1
    assert list(c["by_model"]) == sorted(c["by_model"])
    json.dumps(c)  # goes into summary.json as it is


def test_cost_uses_the_given_table(tmp_path: Path) -> None:
    table = load_prices(write(tmp_path, {"models": {"gpt-9": {"input": 1, "output": 1, "cache_write": 0,
                                                             "cache_read": 0}}}))
    c = cost([episode("gpt-9", {"input_tokens": 1_000_000, "output_tokens": 1_000_000})], prices=table)
    assert c["usd"] == pytest.approx(2.0) and c["unpriced_models"] == []


def test_offline_cost_keeps_the_stable_keys_and_costs_nothing() -> None:
    c = cost([episode("sim:lexical", {"input_tokens": 10, "output_tokens": 5}, key="a"),
              episode("sim:skim", {"input_tokens": 20, "output_tokens": 5}, key="b")])
    assert {"input_tokens", "output_tokens", "cache_read_tokens", "usd"} <= set(c)
    assert c["usd"] == 0.0 and c["unpriced_models"] == [] and c["input_tokens"] == 30
    data = {"cost": c, "offline": True, "episodes": {"run": 2, "cached": 0, "infra_errors": 0}}
    text = "\n".join(_cost_section(data))
    assert "USD 0.0000 (offline agents cost nothing)" in text
    assert "- sim:lexical: input 10, output 5" in text and "- sim:skim: input 20" in text
    assert "Prices:" not in text


def test_report_shows_usd_to_4_decimals_per_model_and_unpriced_models() -> None:
    c = cost([episode("claude-sonnet-5-5", USAGE, key="a"), episode("gpt-9", {"input_tokens": 7}, key="b")])
    data = {"cost": c, "offline": False, "episodes": {"run": 2, "cached": 0, "infra_errors": 0}}
    text = "\n".join(_cost_section(data))
    assert "USD 0.1230" in text and "offline agents cost nothing" not in text
    assert "- claude-sonnet-5-5: input 12,000, output 3,000, cache reads 40,000, cache writes 8,000; USD 0.1230" in text
    assert "- gpt-9: input 7, output 0, cache reads 0, cache writes 0; no price" in text
    assert "No price for gpt-9" in text and "Prices: built-in" in text
    single = "\n".join(_cost_section({**data, "cost": cost([episode("claude-sonnet-5-5", USAGE)])}))
    assert "- claude-sonnet-5-5" not in single  # one model: the totals line says it all
