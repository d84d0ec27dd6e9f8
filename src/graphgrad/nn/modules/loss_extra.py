"""The loss layers of ``nn._functional.loss_extra``: ``CTCLoss``, ``MultiLabelMarginLoss`` and
``TripletMarginWithDistanceLoss``, configured and repr'd as torch's."""

from __future__ import annotations

from .. import functional as F
from .distance import PairwiseDistance
from .loss import _Loss

__all__ = ["CTCLoss", "MultiLabelMarginLoss", "TripletMarginWithDistanceLoss"]


class CTCLoss(_Loss):
    """Connectionist temporal classification loss (see ``F.ctc_loss``).

    >>> import graphgrad as torch
    >>> lp = torch.zeros(3, 1, 2).log_softmax(2)
    >>> torch.nn.CTCLoss(reduction="sum")(lp, torch.tensor([[1]]), (3,), (1,))
    tensor(0.2877)
    """

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False):
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                          self.reduction, self.zero_infinity)


class MultiLabelMarginLoss(_Loss):
    """Multi-class multi-label hinge loss (see ``F.multilabel_margin_loss``)."""

    def forward(self, input, target):
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """Triplet margin loss with a distance function, by default ``PairwiseDistance()``."""

    def __init__(self, *, distance_function=None, margin: float = 1.0, swap: bool = False,
                 reduction: str = "mean"):
        super().__init__(size_average=None, reduce=None, reduction=reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than "
                             f"0, got {margin} instead")
        self.distance_function = (distance_function if distance_function is not None
                                  else PairwiseDistance())
        self.margin = margin
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)
