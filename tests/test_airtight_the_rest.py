"""Issue 61, part B: the hang in the registration probe, journals and locks of a render, ledger forgeries that agree
with themselves, evaluation records outside the contract, and faults found late. Each case is refused before any
work, naming the condition, file, folder or parameter; nothing hangs and no file moves from outside a render."""
import threading

import pytest
import torch

from prism_nb.core import ConfigError
from prism_nb.sampling import CONDITIONS, register_condition, register_signal_condition
import prism_nb.sampling as sampling


def raised(fn, kind, *parts) -> str:
    "The message of the error `fn` raises, checked to be a `kind` holding every part."
    with pytest.raises(Exception) as e:
        fn()
    assert isinstance(e.value, kind), (type(e.value).__name__, str(e.value))
    for p in parts:
        assert p in str(e.value), (p, str(e.value))
    return str(e.value)


# --- 1. registering a condition -----------------------------------------------------------------

@pytest.mark.parametrize('sees', [True, False])
def test_a_condition_that_never_returns_is_refused_at_registration_naming_it(monkeypatch, sees):
    monkeypatch.setattr(sampling, 'PROBE_LIMIT_S', 0.2, raising=False)
    release = threading.Event()

    def hangs(*args):
        release.wait()  # never returns until the test lets it go
        raise RuntimeError('released')

    name = f'Hangs{sees}'
    register = register_signal_condition if sees else register_condition
    try:
        raised(lambda: register(name)(hangs), ConfigError, repr(name), 'did not return')
    finally:
        release.set()
    assert name not in CONDITIONS


def test_the_probe_under_its_limit_keeps_the_global_generator():
    state = torch.get_rng_state()

    def draws_from_g(v, m, steps, g):
        torch.rand(3)  # a draw from torch's global generator the probe puts back, wherever it runs
        out = torch.zeros_like(m)
        out[:, :steps] = 1.0
        return out

    register_signal_condition('QuickOne')(draws_from_g)  # the same masks twice: accepted
    assert torch.equal(torch.get_rng_state(), state)


@pytest.mark.parametrize('fn', [len, print, torch.ones_like, lambda v, m: m])
def test_a_function_that_cannot_take_the_conditions_arguments_is_refused_at_registration(fn):
    raised(lambda: register_signal_condition('Builtin')(fn), ConfigError, "'Builtin'", '(v, m, steps, g)')
    raised(lambda: register_condition('BuiltinPlain')(fn), ConfigError, "'BuiltinPlain'", '(n, L, D, steps, g)')
    assert 'Builtin' not in CONDITIONS and 'BuiltinPlain' not in CONDITIONS
