"Burst: a sampling condition observing all channels together in one block of steps."
import torch
from prism_nb.sampling import register_condition


@register_condition('Burst')
def burst_condition(n, L, D, steps, g):
    "All D channels observed together at `steps` consecutive steps; the start drawn per window."
    # one start per window, shared by its channels: drawn per channel, the bursts would fall at
    # different times (a desynchronized condition); every draw from `g`, so masks are reproducible
    start = torch.randint(0, L - steps + 1, (n, 1, 1), generator=g)
    step = torch.arange(L).view(1, L, 1)
    return ((step >= start) & (step < start + steps)).expand(n, L, D).float()
