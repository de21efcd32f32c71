"Mean-max: a small encoder registered as backbone 'meanmax', for every method (PRISM included)."
import torch
import torch.nn as nn
from prism_nb.backbones import register_backbone


class MeanMax(nn.Module):
    "Per channel, the mean and the largest of the observed values, through one linear layer."
    def __init__(self, n_features: int, seq_len: int, out_dim: int = 16):
        super().__init__()
        self.out_dim = out_dim  # the backbone contract: an integer out_dim, the feature size
        self.lin = nn.Linear(2 * n_features, out_dim)

    def forward(self, v, m, t):
        mean = v.sum(1) / m.sum(1).clamp(min=1)  # v is 0 where unobserved
        seen = m.sum(1) > 0  # a channel never observed gives 0, not the fill value
        top = v.masked_fill(m == 0, -1e4).amax(1) * seen
        return torch.relu(self.lin(torch.cat([mean, top], -1)))


register_backbone('meanmax', MeanMax, display='Mean-max')  # records say meanmax; tables Mean-max
