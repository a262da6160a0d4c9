"""Prompt templates shipped with the optimizer (installed as the package `optimizer.prompts`)."""
