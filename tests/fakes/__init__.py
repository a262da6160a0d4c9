"""Local fakes of external services for tests and benchmarks (no network beyond 127.0.0.1)."""
