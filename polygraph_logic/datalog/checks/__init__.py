"""Checks a program must pass before it runs: safety, stratification, declarations and types, Soufflé's own
load-time checks, and record patterns rewritten into plain atoms."""
