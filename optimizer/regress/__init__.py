"""`optimizer regress`: the cross-model release gate (`job.py`) and its JSON, JUnit and Markdown outputs
(`outputs.py`)."""

from optimizer.regress.job import RegressConfig, run_regress

__all__ = ["RegressConfig", "run_regress"]
