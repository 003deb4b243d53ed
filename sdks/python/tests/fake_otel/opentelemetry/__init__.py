"""A stand-in for the opentelemetry-api package (not installable here without an index): the
few calls agent_reach.tracing makes, recording every span, for tests/test_tracing.py."""
