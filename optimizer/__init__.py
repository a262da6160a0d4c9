"""Measure and improve MCP tool definitions with real eval tasks."""

__version__ = "0.1.0"
