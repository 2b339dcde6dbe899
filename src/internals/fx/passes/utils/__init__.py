"""Utilities of fx's passes (``torch/fx/passes/utils``)."""
