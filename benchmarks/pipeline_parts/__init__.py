"""Helpers of benchmarks/pipeline.py."""
