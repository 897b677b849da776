"""Model builders for tests, benchmarks and examples (no downloads)."""
