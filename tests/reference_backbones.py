"""The frozen pre-rewrite mTAND and GRU-D (issue 18), verbatim but for the class names: the reference the fast
encoders of `prism_nb.backbones` are checked against (`test_backbone_equivalence.py`) and timed against
(`bench_backbones.py`). The same code is in nbs/03_backbones.ipynb, section Speed. Do not edit: it is the
reference, not the implementation.
"""
from __future__ import annotations
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from prism_nb.backbones import LearnedTimeEmbedding, check_input, relative_time, time_since_observed

__all__ = ['mTANDReference', 'GRUDReference']


class mTANDReference(nn.Module):
    "mTAND-Enc: multi-time attention from reference times to each feature's observations, then a GRU."
    def __init__(self, n_features: int,  # D
                 seq_len: int | None = None,  # unused: reference points replace the grid
                 out_dim: int = 256,  # size of z (two GRU directions of out_dim/2)
                 n_ref: int = 32,  # reference time points R over each window's span
                 time_dim: int = 32,  # learned time embedding size
                 heads: int = 4,  # attention heads
                 key_dim: int = 16,  # query/key size per head
                 hidden: int = 64):  # GRU input width after mixing the heads
        super().__init__()
        if out_dim % 2: raise ValueError(f"out_dim must be even (two GRU directions), got {out_dim}")
        self.n_features, self.out_dim, self.n_ref, self.heads, self.key_dim = n_features, out_dim, n_ref, heads, key_dim
        self.time_embedding = LearnedTimeEmbedding(time_dim, max_cycles=n_ref / 2)
        self.query = nn.Linear(time_dim, heads * key_dim)
        self.key = nn.Linear(time_dim, heads * key_dim)
        self.mix = nn.Sequential(nn.Linear(heads * 2 * n_features, hidden), nn.ReLU())
        self.gru = nn.GRU(hidden, out_dim // 2, batch_first=True, bidirectional=True)

    def attend(self, v, m, t):
        "Per head, reference time and feature: interpolated values and observation density, each [B,heads,R,D]."
        B, L, D = v.shape
        ref = torch.linspace(0, 1, self.n_ref, device=v.device, dtype=v.dtype)
        q = self.query(self.time_embedding(ref)).view(self.n_ref, self.heads, self.key_dim)
        k = self.key(self.time_embedding(relative_time(t))).view(B, L, self.heads, self.key_dim)
        scores = torch.einsum('rhk,blhk->bhrl', q, k) / math.sqrt(self.key_dim)  # [B,H,R,L]
        # per-feature softmax over that feature's observed steps, [B,H,R,D,L] with steps last (contiguous).
        # A huge negative logit on unobserved steps makes their weight exactly 0 beside any observed step;
        # a feature never observed gets uniform weights over values that are all 0, hence exactly 0.
        # (Cheaper than `masked_softmax` on this, the model's largest tensor.)
        m_steps_last = m.transpose(1, 2)  # [B,D,L]
        penalty = (1 - m_steps_last[:, None, None]) * (torch.finfo(scores.dtype).min / 2)
        w = torch.softmax(scores[:, :, :, None, :] + penalty, -1)
        values = (w * (v * m).transpose(1, 2)[:, None, None]).sum(-1)  # [B,H,R,D]
        density = torch.einsum('bhrl,bld->bhrd', torch.softmax(scores, -1), m)
        return values, density

    def forward(self, v, m, t):
        check_input(v, m, t, self.n_features)
        values, density = self.attend(v, m, t)
        x = torch.cat([values, density], -1).permute(0, 2, 1, 3).flatten(2)  # [B,R,H*2D]
        _, h_last = self.gru(self.mix(x))  # [2,B,out_dim/2]
        return torch.cat([h_last[0], h_last[1]], -1)


class GRUDReference(nn.Module):
    "GRU-D: a GRU with input decay toward the mean and hidden-state decay by time since observation (Che et al., 2018)."
    def __init__(self, n_features: int,  # D
                 seq_len: int | None = None,  # unused: the recurrence runs over any length
                 hidden: int = 128):  # GRU state size, also out_dim
        super().__init__()
        self.n_features, self.out_dim = n_features, hidden
        bound = 1 / math.sqrt(n_features)
        self.input_decay_weight = nn.Parameter(torch.empty(n_features).uniform_(-bound, bound))
        self.input_decay_bias = nn.Parameter(torch.zeros(n_features))
        self.hidden_decay = nn.Linear(n_features, hidden)
        self.mean = nn.Parameter(torch.zeros(n_features))
        self.cell = nn.GRUCell(2 * n_features, hidden)

    def forward(self, v, m, t):
        check_input(v, m, t, self.n_features)
        B, L, D = v.shape
        m = m.to(v.dtype)
        x = v * m
        delta, previous, seen = time_since_observed(m, t)
        x_last = torch.where(seen > 0, x.gather(1, previous), self.mean)
        gamma_x = torch.exp(-F.relu(delta * self.input_decay_weight + self.input_decay_bias))
        x_hat = m * x + (1 - m) * (gamma_x * x_last + (1 - gamma_x) * self.mean)
        gamma_h = torch.exp(-F.relu(self.hidden_decay(delta)))  # [B,L,hidden]
        inputs = torch.cat([x_hat, m], -1)
        h = torch.zeros(B, self.out_dim, device=v.device, dtype=v.dtype)
        for l in range(L):  # the recurrence is sequential; everything else above is vectorized
            h = self.cell(inputs[:, l], gamma_h[:, l] * h)
        return h
