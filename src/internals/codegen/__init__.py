"""Code generation from the YAML files (``torchgen``): ``python -m internals.codegen`` regenerates
``autograd/generated/`` from ``autograd/derivatives.yaml`` and ``aten/native_functions.yaml``."""
