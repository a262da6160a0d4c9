"""`optimize`: the job in order (`job.py`), the parts of a round (`rounds.py`), screening of proposals
(`screening.py`), the outputs (`outputs.py`) and helper processes for the search (`worker.py`)."""

from optimizer.optimize.config import OptimizeConfig, default_models, default_proposer
from optimizer.optimize.job import run_optimize

__all__ = ["OptimizeConfig", "default_models", "default_proposer", "run_optimize"]
