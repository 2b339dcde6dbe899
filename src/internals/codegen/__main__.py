"""``python -m internals.codegen``: regenerate the checked-in generated files."""
from .gen_autograd import main

main()
