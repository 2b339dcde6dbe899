"""``python -m internals.codegen``: regenerate the checked-in generated files."""
from . import gen_autograd, gen_python_functions

gen_autograd.main()
gen_python_functions.main()
