"""Tracing tools (``torch/fx/experimental``)."""
