"""The quote use case: request (domain terms) -> service (orchestration) -> typed result."""
