"""Model prices in USD per million tokens, for the `cost` of a run.

The built-in table is `optimizer/cost/prices.json` (package data): list prices, to be checked against the
provider's current price list. A price file a person writes has the same shape and may list only some
models; `load_prices` lays it over the built-in table, so the models it names get its prices and all
others keep theirs::

    {"batch_discount": 0.5,                     # optional; fraction taken off every price in a batch
     "models": {"claude-haiku-5-5": {"input": 1, "output": 5, "cache_write": 1.25, "cache_read": 0.1}}}

Keys starting with `_` (such as `_note`) are comments. Every model entry needs all four prices, each a
finite number >= 0. A bad file raises `PriceError` naming the file and the entry.

Model ids are looked up as agents name them: an `anthropic:` prefix and any `?options` are dropped, a
dated snapshot (`claude-haiku-4-5-20251001`) falls back to its alias when the table lacks it, offline
`sim:*` agents and `reader:*` readers cost nothing, and any other unknown model has no price (`None`), never a
guessed one.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

PER_TOKENS = 1_000_000
PRICE_FIELDS = ("input", "output", "cache_write", "cache_read")
USAGE_KEYS = {"input": "input_tokens", "output": "output_tokens", "cache_write": "cache_write_tokens",
              "cache_read": "cache_read_tokens"}
"""Price field -> the `Usage.to_json()` key it prices (input_tokens excludes cache reads and writes)."""
BUILT_IN = "built-in (optimizer/cost/prices.json)"
DATED = re.compile(r"^(?P<alias>.+)-\d{8}$")


class PriceError(ValueError):
    """A price file that cannot be read or holds a bad entry; the message names the file and the entry."""


@dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens of each kind for one model."""

    input: float
    output: float
    cache_write: float
    cache_read: float

    def usd(self, usage: Mapping[str, Any]) -> float:
        """USD for a usage dict with `Usage.to_json()` keys; a missing key counts as 0 tokens."""
        total: float = sum(getattr(self, f) * int(usage.get(key) or 0) for f, key in USAGE_KEYS.items())
        return total / PER_TOKENS


FREE = ModelPrice(0.0, 0.0, 0.0, 0.0)


def model_name(model_id: str) -> str:
    """The name a model is priced under: `anthropic:claude-haiku-5-5?x=1` -> `claude-haiku-5-5`."""
    name = model_id.strip().partition("?")[0].strip()
    return name.removeprefix("anthropic:")


def is_offline_model(model_id: str) -> bool:
    """True for the simulated `sim:*` agents and the offline `reader:*` readers, which cost nothing."""
    return model_name(model_id).startswith(("sim:", "reader:"))


@dataclass(frozen=True)
class PriceTable:
    """Prices per model name, the batch discount (0..1, taken off every price) and where they came from."""

    models: Mapping[str, ModelPrice] = field(default_factory=dict)
    batch_discount: float = 0.5
    source: str = BUILT_IN

    @classmethod
    def default(cls) -> PriceTable:
        """The built-in table (read once per process)."""
        return _default_table()

    def price_for(self, model_id: str) -> ModelPrice | None:
        """The price of the model an agent id names: `FREE` for `sim:*`, None when the table has no price."""
        if is_offline_model(model_id):
            return FREE
        name = model_name(model_id)
        price = self.models.get(name)
        dated = DATED.match(name)
        if price is None and dated:
            price = self.models.get(dated["alias"])
        return price

    def usd(self, model_id: str, usage: Mapping[str, Any], *, batch: bool = False) -> float | None:
        """USD for one usage dict (`Usage.to_json()` keys) of a model, with the batch discount when `batch`;
        None when the model has no price."""
        price = self.price_for(model_id)
        if price is None:
            return None
        return price.usd(usage) * ((1.0 - self.batch_discount) if batch else 1.0)

    def overlaid(self, other: PriceTable) -> PriceTable:
        """This table with `other`'s models and batch discount on top (`other` wins where both name a model)."""
        models = {**self.models, **other.models}
        return PriceTable(MappingProxyType(models), other.batch_discount, other.source)


def load_prices(path: str | Path, base: PriceTable | None = None) -> PriceTable:
    """Read a price file and lay it over `base` (the built-in table when None). A file without
    `batch_discount` keeps the base's. Raises PriceError naming the file and the bad entry."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PriceError(f"{path}: cannot read the price file ({exc.strerror or exc})") from None
    base = base or PriceTable.default()
    data = _parse(text, str(path))
    table = _table(data, str(path), default_discount=base.batch_discount)
    return base.overlaid(PriceTable(table.models, table.batch_discount, f"{path} over {base.source}"))


@lru_cache(maxsize=1)
def _default_table() -> PriceTable:
    try:
        text = resources.files("optimizer.cost").joinpath("prices.json").read_text(encoding="utf-8")
    except (FileNotFoundError, ModuleNotFoundError):
        raise PriceError("optimizer/cost/prices.json is missing from this installation") from None
    label = "optimizer/cost/prices.json"
    table = _table(_parse(text, label), label, default_discount=None)
    return PriceTable(table.models, table.batch_discount, BUILT_IN)


def _parse(text: str, label: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PriceError(f"{label}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    if not isinstance(data, dict):
        raise PriceError(f"{label}: expected a JSON object with a 'models' object, got {type(data).__name__}")
    return data


def _table(data: dict[str, Any], label: str, *, default_discount: float | None) -> PriceTable:
    """Validate one parsed price file. `default_discount` None means `batch_discount` is required."""
    unknown = sorted(k for k in data if not k.startswith("_") and k not in ("models", "batch_discount"))
    if unknown:
        raise PriceError(f"{label}: unknown key(s) {', '.join(unknown)}; expected 'models' and 'batch_discount'")
    if "batch_discount" in data:
        discount = _number(data["batch_discount"], label, "batch_discount")
        if discount > 1:
            raise PriceError(f"{label}: batch_discount: must be between 0 and 1 (a fraction), got {discount}")
    elif default_discount is None:
        raise PriceError(f"{label}: batch_discount: missing")
    else:
        discount = default_discount
    models = data.get("models")
    if not isinstance(models, dict):
        raise PriceError(f"{label}: models: missing or not an object of model name -> prices")
    prices: dict[str, ModelPrice] = {}
    for key, entry in models.items():
        name = model_name(str(key))
        if is_offline_model(name):
            raise PriceError(f"{label}: models.{key}: offline models (sim:*, reader:*) always cost nothing")
        prices[name] = _model_price(entry, label, f"models.{key}")
    return PriceTable(MappingProxyType(prices), discount, label)


def _model_price(entry: Any, label: str, where: str) -> ModelPrice:
    if not isinstance(entry, dict):
        raise PriceError(f"{label}: {where}: expected an object with {', '.join(PRICE_FIELDS)}")
    unknown = sorted(k for k in entry if k not in PRICE_FIELDS)
    if unknown:
        raise PriceError(f"{label}: {where}: unknown field(s) {', '.join(unknown)}; "
                         f"allowed: {', '.join(PRICE_FIELDS)} (USD per million tokens)")
    missing = [f for f in PRICE_FIELDS if f not in entry]
    if missing:
        raise PriceError(f"{label}: {where}.{missing[0]}: missing (every model needs {', '.join(PRICE_FIELDS)})")
    return ModelPrice(**{f: _number(entry[f], label, f"{where}.{f}") for f in PRICE_FIELDS})


def _number(value: Any, label: str, where: str) -> float:
    """A finite number >= 0, or PriceError."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PriceError(f"{label}: {where}: expected a number, got {json.dumps(value)}")
    if not math.isfinite(value) or value < 0:
        raise PriceError(f"{label}: {where}: must be a finite number >= 0, got {value}")
    return float(value)
