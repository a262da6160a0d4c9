"""Eval tasks: the data model, loaders and split (`taskset`), checking a set against a server (`check`), and writing
one for a server that has none (`generate`, with Claude; `explore` and `offline`, the stand-in without a model)."""

from optimizer.scoring import Expect
from optimizer.tasks.taskset import MATCHES, SPLITS, Task, TaskError, TaskSet, assign_split, load_tasks

__all__ = ["MATCHES", "SPLITS", "Expect", "Task", "TaskError", "TaskSet", "assign_split", "load_tasks"]
