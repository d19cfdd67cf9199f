"""Evaluation: ranking and rating metrics, runs on a held-out split, privacy–utility sweeps."""
