"""Optimizers and learning-rate schedulers, as ``torch.optim``.

>>> import graphgrad as torch
>>> w = torch.tensor([1.0], requires_grad=True)
>>> opt = torch.optim.SGD([w], lr=0.5)
>>> sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.1)
>>> (w * w).sum().backward(); opt.step(); sched.step()
>>> w, sched.get_last_lr()
(tensor([0.], requires_grad=True), [0.05])
"""

from . import lr_scheduler, swa_utils
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .asgd import ASGD
from .lbfgs import LBFGS
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD

# As in torch, the global step hooks and ``required`` live in ``optim.optimizer``.
__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax",
           "ASGD", "LBFGS", "NAdam", "RAdam", "Rprop", "lr_scheduler", "swa_utils"]
