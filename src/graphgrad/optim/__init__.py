"""Optimizers and learning-rate schedulers, as ``torch.optim``.

>>> import graphgrad as torch
>>> w = torch.tensor([1.0], requires_grad=True)
>>> opt = torch.optim.SGD([w], lr=0.5)
>>> sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.1)
>>> (w * w).sum().backward(); opt.step(); sched.step()
>>> w, sched.get_last_lr()
(tensor([0.], requires_grad=True), [0.05])
"""

from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam
from .adamw import AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

# As in torch, the global step hooks and ``required`` live in ``optim.optimizer``.
__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]
