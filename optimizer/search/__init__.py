"""The optuna search over a round's candidate pool: the study, the pool, storages, trial owners."""
