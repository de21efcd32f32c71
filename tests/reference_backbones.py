"""The pre-rewrite computations of mTAND's attention and GRU-D's recurrence, frozen: the reference the
fast encoders of `prism_nb.backbones` are checked against (`test_backbone_equivalence.py`) and timed against
(`tools/bench_backbones.py`). The rewrite kept the modules' parameters and everything else, so each reference subclasses
the fast encoder and overrides only the method that changed. The same code is in nbs/03_backbones.ipynb, section
Speed. Do not edit: it is the reference, not the implementation.
"""
from __future__ import annotations
import math

import torch
import torch.nn.functional as F

from prism_nb.backbones import GRUD, mTAND, check_input, relative_time, time_since_observed

__all__ = ['mTANDReference', 'GRUDReference']


class mTANDReference(mTAND):
    "mTAND with the pre-rewrite attention: a per-feature softmax over a [B,heads,R,D,L] tensor."
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
        m_steps_last = m.transpose(1, 2)  # [B,D,L]
        penalty = (1 - m_steps_last[:, None, None]) * (torch.finfo(scores.dtype).min / 2)
        w = torch.softmax(scores[:, :, :, None, :] + penalty, -1)
        values = (w * (v * m).transpose(1, 2)[:, None, None]).sum(-1)  # [B,H,R,D]
        density = torch.einsum('bhrl,bld->bhrd', torch.softmax(scores, -1), m)
        return values, density


class GRUDReference(GRUD):
    "GRU-D with the pre-rewrite recurrence: `nn.GRUCell` stepped over every step, inputs projected inside the loop."
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
