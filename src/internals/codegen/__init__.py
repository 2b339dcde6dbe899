"""Code generation from the YAML files (``torchgen``): ``python -m internals.codegen`` regenerates
``autograd/generated/`` (gen_autograd.py: backward nodes and Autograd kernels, from
``autograd/derivatives.yaml``) and ``_generated/`` (gen_python_functions.py: the Tensor methods
and namespace functions with their argument parsing, from ``aten/native_functions.yaml``)."""
