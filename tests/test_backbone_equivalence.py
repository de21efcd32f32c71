"""The fast mTAND and GRU-D of `prism_nb.backbones` against the frozen pre-rewrite code in `reference_backbones.py`.

Same weights (state_dicts load strictly both ways), same outputs and parameter gradients up to float rounding;
values in unobserved cells change nothing. The notebook 03_backbones runs the same checks inline.
"""
import pytest
import torch

from prism_nb.backbones import GRUD, mTAND, gru_recurrence, relative_time
from reference_backbones import GRUDReference, mTANDReference

PAIRS = {'mtand': (mTAND, mTANDReference), 'grud': (GRUD, GRUDReference)}
TOL = dict(atol=1e-5, rtol=1e-4)


def holey_batch(B, L, D=5, density=.25, seed=0):
    "Random irregular batch; the first window never observes feature 1 and the last window observes nothing."
    g = torch.Generator().manual_seed(seed)
    m = (torch.rand(B, L, D, generator=g) < density).float()
    t = torch.rand(B, L, generator=g).cumsum(1) * .02
    m[0, :, 1] = 0; m[-1] = 0
    return torch.randn(B, L, D, generator=g) * m, m, t


def outputs_and_grads(enc, v, m, t, train):
    enc.train(train); enc.zero_grad()
    z = enc(v, m, t)
    # random weights on z: a plain sum could hide errors that cancel across outputs
    (z * torch.randn(z.shape, generator=torch.Generator().manual_seed(1))).sum().backward()
    return z.detach(), {k: p.grad for k, p in enc.named_parameters()}


def assert_same(new, old, batch, train):
    old.load_state_dict(new.state_dict()); new.load_state_dict(old.state_dict())
    (z_new, g_new), (z_old, g_old) = outputs_and_grads(new, *batch, train), outputs_and_grads(old, *batch, train)
    torch.testing.assert_close(z_new, z_old, **TOL)
    assert set(g_new) == set(g_old)
    for k in g_old:
        assert g_new[k] is not None, k
        torch.testing.assert_close(g_new[k], g_old[k], **TOL, msg=lambda s: f'{k}: {s}')


@pytest.mark.parametrize('name', PAIRS)
def test_state_dicts_interchangeable(name):
    new, old = (cls(6, 128) for cls in PAIRS[name])
    assert {k: v.shape for k, v in new.state_dict().items()} == {k: v.shape for k, v in old.state_dict().items()}


@pytest.mark.parametrize('train', [True, False])
@pytest.mark.parametrize('B,L', [(5, 37), (3, 19), (2, 1), (7, 128)])
@pytest.mark.parametrize('seed', [0, 1, 2])
@pytest.mark.parametrize('name', PAIRS)
def test_same_outputs_and_gradients(name, seed, B, L, train):
    torch.manual_seed(seed)
    new, old = (cls(5, L) for cls in PAIRS[name])
    assert_same(new, old, holey_batch(B, L, seed=seed), train)


def test_mtand_sharp_attention():
    "Query weights so large that a feature's shared exponentials underflow: the per-feature path must take over."
    torch.manual_seed(0)
    new = mTAND(5, 37)
    with torch.no_grad(): new.query.weight.mul_(300); new.query.bias.mul_(300)
    v, m, t = holey_batch(4, 37, seed=5)
    with torch.no_grad():  # the situation really arises in this batch
        q = new.query(new.time_embedding(torch.linspace(0, 1, 32))).view(32, 4, 16)
        k = new.key(new.time_embedding(relative_time(t))).view(4, 37, 4, 16)
        s = torch.einsum('rhk,blhk->bhrl', q, k) / 4
        den = torch.exp(s - s.amax(-1, keepdim=True)) @ m
        assert ((den == 0) & (m.amax(1)[:, None, None] > 0)).any()
    assert_same(new, mTANDReference(5, 37), (v, m, t), True)


@pytest.mark.parametrize('name', PAIRS)
def test_unobserved_values_change_nothing(name):
    torch.manual_seed(0)
    enc = PAIRS[name][0](5, 37)
    v, m, t = holey_batch(4, 37, seed=3)
    noise = torch.randn(v.shape, generator=torch.Generator().manual_seed(4)) * 100 * (1 - m)
    (z, g), (z_noisy, g_noisy) = outputs_and_grads(enc, v, m, t, True), outputs_and_grads(enc, v + noise, m, t, True)
    assert torch.equal(z, z_noisy)
    assert all(torch.equal(g[k], g_noisy[k]) for k in g)


def test_gru_recurrence_gradcheck():
    g = torch.Generator().manual_seed(0)
    gi, w, b = (torch.randn(*s, generator=g, dtype=torch.float64).requires_grad_() for s in ((6, 3, 12), (12, 4), (12,)))
    decay = torch.rand(6, 3, 4, generator=g, dtype=torch.float64).requires_grad_()
    assert torch.autograd.gradcheck(gru_recurrence, (gi, w, b, decay))
    assert torch.autograd.gradcheck(gru_recurrence, (gi, w, b))
