"""``torch.func``: composable function transforms (grad, vjp, jvp, jacrev, jacfwd, hessian,
vmap) and ``functional_call`` for running modules as functions of their parameters.

The transforms are built on graphgrad's tape autograd; vmap runs the function per element.
"""

from ._extras import functionalize, linearize, replace_all_batch_norm_modules_
from .functional_call import functional_call, stack_module_state
from .grad import grad, grad_and_value, vjp
from .jacobian import hessian, jacfwd, jacrev
from .jvp import jvp
from .vmap import vmap

__all__ = ["functional_call", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp",
           "stack_module_state", "vjp", "vmap", "functionalize", "linearize",
           "replace_all_batch_norm_modules_"]
