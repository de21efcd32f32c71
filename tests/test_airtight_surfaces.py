"""Issue 53, part 1: the surfaces the signal conditions, the search and the sweeps added, tried as a careless or
hostile user would. Each case either works or fails before any work, with an error naming the condition, the method
and knob, or the parameter; nothing is drawn, trained or written that should not be."""
import io, json, subprocess, sys, time
from pathlib import Path

import numpy as np
import pytest
import torch

from prism_nb.core import ConfigError, ISMTS
from prism_nb.sampling import (CONDITIONS, check_budget, condition_masks, condition_masks_within, register_condition,
                               register_signal_condition, sees_values, send_on_delta_masks)
import prism_nb.sampling as sampling
from prism_nb.algorithms import (ALGORITHMS, ERM, SearchDist, choice, draw_hparams, int_pow, log10_uniform, register_algorithm,
                                 uniform)
from prism_nb.config import make_config, observe_tests, record_path
from prism_nb.sweep import run_sweep, sweep_commands
from conftest import RecordingExecutor


def raised(fn, kind, *parts) -> str:
    "The message of the error `fn` raises, checked to be a `kind` holding every part."
    with pytest.raises(Exception) as e:
        fn()
    assert isinstance(e.value, kind), (type(e.value).__name__, str(e.value))
    for p in parts:
        assert p in str(e.value), (p, str(e.value))
    return str(e.value)


def windows(n=8, L=64, D=3, seed=0) -> torch.Tensor:
    return torch.randn(n, L, D, generator=torch.Generator().manual_seed(seed))


def first_steps(v, m, steps, g):
    "A valid signal condition: the first `steps` steps of every channel."
    out = torch.zeros_like(m)
    out[:, :steps] = 1.0
    return out


# --- 1. conditions cannot touch what they are given ----------------------------------------------

def _zeroing(v, m, steps, g):
    v.mul_(0).add_(7)  # a plugin that writes into its input
    return first_steps(v, m, steps, g)


def _centring(v, m, steps, g):
    v -= v.mean(1, keepdim=True)  # a plugin normalising in place
    m.zero_()
    return first_steps(v, torch.ones_like(v), steps, g)


@pytest.mark.parametrize('fn', [_zeroing, _centring])
def test_a_condition_changing_its_input_leaves_the_callers_windows_alone(fn):
    name = f'Poison{fn.__name__}'
    register_signal_condition(name)(fn)
    v = windows()
    before = v.clone()
    condition_masks(name, 8, 64, 3, 0.25, values=v)
    assert torch.equal(v, before)
    held = v.clone()
    held[:, ::3] = 0  # windows that observe only some steps take the other path
    observed = (held != 0).float()
    held_before = held.clone()
    condition_masks_within(name, observed, 0.25, values=held)
    assert torch.equal(held, held_before)


def test_a_poisoning_condition_changes_no_condition_drawn_after_it():
    register_signal_condition('PoisonFirst')(_zeroing)
    v = windows(8, 64, 3, seed=1)
    x = ISMTS(v.clone(), torch.ones(8, 64, 3), torch.arange(64.0).expand(8, 64), torch.zeros(8, dtype=torch.long),
              torch.zeros(8, dtype=torch.long))
    sets = observe_tests(x, ['PoisonFirst', 'Send-on-delta', 'Random'], 0.25, 0)
    assert torch.equal(x.v, v)
    assert torch.equal(sets['Send-on-delta'].m, send_on_delta_masks(v, 16))
    assert torch.equal(sets['Random'].v, v * sets['Random'].m)


def test_a_condition_ignoring_its_generator_is_refused_when_registered():
    def global_rng(v, m, steps, g):
        return first_steps(v, m, steps, g)[:, torch.randperm(v.shape[1])]  # torch's global generator

    raised(lambda: register_signal_condition('Unseeded')(global_rng), ConfigError, "'Unseeded'", 'generator')
    assert 'Unseeded' not in CONDITIONS

    def plain_global(n, L, D, steps, g):
        keep = torch.rand(n, L).argsort(-1) < steps  # ignores g
        return keep.unsqueeze(-1).float().expand(n, L, D).contiguous()

    raised(lambda: register_condition('UnseededPlain')(plain_global), ConfigError, "'UnseededPlain'", 'generator')
    assert 'UnseededPlain' not in CONDITIONS
    register_signal_condition('SignalOnly')(first_steps)  # deterministic without g: accepted
    assert sees_values('SignalOnly')


def test_the_registration_probe_leaves_the_global_generators_alone():
    state = torch.get_rng_state()
    np_state = np.random.get_state()[1].copy()

    def uses_everything(v, m, steps, g):
        shift = int(torch.randint(0, 50, ())) + int(np.random.randint(50))  # from the global generators
        return first_steps(v, m, steps, g).roll(shift, 1)

    with pytest.raises(ConfigError):
        register_signal_condition('UsesEverything')(uses_everything)
    assert torch.equal(torch.get_rng_state(), state)
    assert (np.random.get_state()[1] == np_state).all()


@pytest.mark.parametrize('fn', [torch.ones_like, sampling.random_condition, first_steps])
def test_a_signal_condition_on_a_built_in_name_is_refused_clearly(fn):
    raised(lambda: register_signal_condition('Random')(fn), ValueError, "'Random' is built in")
    assert not sees_values('Random')  # the failed attempt left the built-in as it was
    assert condition_masks('Random', 4).shape == (4, 128, 6)


def test_a_slow_condition_says_so_while_it_runs(monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr(sys, 'stderr', err)
    monkeypatch.setattr(sampling, 'CONDITION_WATCH_S', 0.01)

    def slow(v, m, steps, g):
        for _ in range(3000):  # until the watch has spoken (30 s at most)
            if 'SlowTwo' in err.getvalue():
                break
            time.sleep(0.01)
        return first_steps(v, m, steps, g)

    with CONDITIONS.temporary('SlowTwo', slow):
        slow.sees_values = True
        condition_masks('SlowTwo', 4, 64, 3, 0.25, values=windows(4))
    line = err.getvalue()
    assert "condition 'SlowTwo'" in line and '4 windows' in line, line


def test_a_numpy_mask_is_refused_saying_what_it_is():
    m = np.ones((2, 10, 3), dtype=np.float32)
    raised(lambda: check_budget(m, 10, 'Mine'), ValueError, 'Mine', 'numpy.ndarray')
    x = ISMTS(torch.ones(2, 10, 3), torch.ones(2, 10, 3), torch.zeros(2, 10), torch.zeros(2, dtype=torch.long),
              torch.zeros(2, dtype=torch.long))
    raised(lambda: x.with_mask(m), ValueError, 'numpy.ndarray', 'torch')
    raised(lambda: check_budget(torch.ones(2, 10, 3, dtype=torch.float64), 10, 'Mine'), ValueError,
           'float32', 'torch.float64')


def test_a_mask_of_the_wrong_length_names_what_it_was_for():
    x = ISMTS(torch.ones(5, 10, 3), torch.ones(5, 10, 3), torch.zeros(5, 10), torch.zeros(5, dtype=torch.long),
              torch.zeros(5, dtype=torch.long))
    raised(lambda: x.with_mask(torch.ones(4, 10, 3), 'task mine: test masks'), ValueError,
           'task mine: test masks', '(5, 10, 3)', '(4, 10, 3)')
    raised(lambda: x.with_mask(torch.ones(10, 3)), ValueError, '(5, 10, 3)', '(10, 3)')
    assert torch.equal(x.with_mask(torch.zeros(5, 10, 3)).v, torch.zeros(5, 10, 3))


# --- 2. the search refuses before work -----------------------------------------------------------

@pytest.mark.parametrize('make,parts', [
    (lambda: SearchDist('gauss', (0, 1)), ["'gauss'", 'log10, uniform, int_pow, choice']),
    (lambda: SearchDist('log', (-3, -1)), ["'log'", 'log10']),
    (lambda: SearchDist('log10', (-3,)), ['log10', '(lo, hi)']),
    (lambda: SearchDist('uniform', 0.5), ['uniform', 'tuple']),
    (lambda: log10_uniform(float('nan'), 1), ['finite']),
    (lambda: log10_uniform(-1, float('inf')), ['finite']),
    (lambda: log10_uniform(0, 400), ['10**400']),
    (lambda: uniform(1, 0), ['lo < hi']),
    (lambda: uniform('a', 1), ['number']),
    (lambda: int_pow(10, 0, 400), ['2**53']),
    (lambda: int_pow(1, 0, 3), ['base']),
    (lambda: int_pow(-2, 0, 3), ['base']),
    (lambda: int_pow(2, -3, 1), ['at least 1']),
    (lambda: int_pow(2, 3, 1), ['lo < hi']),
    (lambda: choice(), ['at least one']),
    (lambda: choice(1.0, float('nan')), ['nan']),
    (lambda: choice([1, 2], object()), ['object']),
])
def test_a_malformed_distribution_is_refused_when_declared(make, parts):
    raised(make, ConfigError, *parts)


def _method(name, space, defaults=None, hspace=None):
    "A plugin-like ERM subclass with its own search space, registered as `name`."
    d, h = defaults or {}, hspace or {}

    class Searched(ERM):
        @classmethod
        def defaults(cls):
            return {**super().defaults(), **d}

        @classmethod
        def hparam_space(cls):
            return {**super().hparam_space(), **h}

        @classmethod
        def search_space(cls):
            return space() if callable(space) else space

    Searched.__qualname__ = f'Searched_{name}'
    return lambda: register_algorithm(name)(Searched)


@pytest.mark.parametrize('name,space,defaults,hspace,parts', [
    ('BigBatch', dict(batch_size=int_pow(2, 0, 20)), None, None, ['BigBatch', 'batch_size', '4096']),
    ('NoSuchKnob', dict(nosuch=uniform(0, 1)), None, None, ['NoSuchKnob', "'nosuch'", 'valid']),
    ('WideDecay', dict(weight_decay=log10_uniform(-2, 1)), None, None, ['WideDecay', 'weight_decay', '[0.0, 1.0]']),
    ('FloatCount', dict(count=log10_uniform(0, 2)), dict(count=3), dict(count=(1, 100)), ['FloatCount', "'count'",
                                                                                           'int']),
    ('BadChoice', dict(count=choice(1, 2, 500)), dict(count=3), dict(count=(1, 100)), ['BadChoice', 'count', '500']),
    ('NotADist', dict(weight_decay=(0, 1)), None, None, ['NotADist', 'weight_decay', 'SearchDist']),
    ('NotADict', lambda: [uniform(0, 1)], None, None, ['NotADict', 'dict']),
    ('RaisesInside', lambda: dict(weight_decay=SearchDist('gauss', (0, 1))), None, None, ['RaisesInside', "'gauss'"]),
    ('SeedKnob', dict(seed=choice(1, 2)), None, None, ['SeedKnob', "'seed'"]),
])
def test_a_malformed_space_is_refused_naming_method_and_knob(name, space, defaults, hspace, parts):
    raised(_method(name, space, defaults, hspace), ConfigError, *parts)
    assert name.lower() not in ALGORITHMS


def test_draw_hparams_checks_a_space_patched_after_registration():
    from prism_nb.algorithms import ALGORITHMS
    register = _method('LaterBad', dict(weight_decay=uniform(0, 0.1)))
    cls = register()
    cls.search_space = classmethod(lambda c: dict(batch_size=int_pow(10, 0, 15)))
    raised(lambda: draw_hparams('laterbad', 1), ConfigError, 'LaterBad', 'batch_size')
    assert 'laterbad' in ALGORITHMS


def test_the_built_in_draws_are_unchanged():
    "Draws 1-3 of two methods, as the committed records of the search hold them."
    for m in ('irm', 'dann'):
        for d in (1, 2, 3):
            a = draw_hparams(m, d)
            assert a == draw_hparams(m, d) and set(a) >= {'lr', 'batch_size', 'weight_decay'}


# --- 3. config bounds ------------------------------------------------------------------------------

@pytest.mark.parametrize('kw,parts', [
    (dict(batch_size=10**100), ['batch_size must be in [2, 4096]']),
    (dict(batch_size=4097), ['batch_size must be in [2, 4096]']),
    (dict(experiment=2024), ['experiment must be a folder name (a string)', 'int 2024', '-r experiment 2024']),
    (dict(experiment=1.5), ['experiment must be a folder name (a string)', 'float']),
    (dict(experiment=None), ['experiment must be a folder name (a string)', 'None']),
])
def test_config_bounds(kw, parts):
    raised(lambda: make_config(**kw), ConfigError, *parts)


def test_the_largest_batch_is_accepted():
    assert make_config(batch_size=4096)['batch_size'] == 4096


def test_a_string_experiment_that_looks_like_a_number_reaches_the_run_as_a_string():
    cfg = make_config(experiment='2024')
    cmd = sweep_commands([cfg], results_dir='/tmp/r')[0]
    from papermill.cli import _resolve_type
    import shlex
    words, back = shlex.split(cmd), {}
    for i, w in enumerate(words):
        if w == '-p':
            back[words[i + 1]] = _resolve_type(words[i + 2])
        if w == '-r':
            back[words[i + 1]] = words[i + 2]
    assert back['experiment'] == '2024' and back['lr'] == cfg['lr']


def test_run_refuses_threads_beyond_the_machine(tmp_path):
    from prism_nb.experiment import run
    raised(lambda: run(dict(epochs=1), results_dir=tmp_path, threads=10**6), ConfigError, 'threads must be in [1,')
    assert not any(tmp_path.rglob('*'))


def test_papermill_names_a_numeric_experiment(root, tmp_path):
    res = subprocess.run([sys.executable, '-m', 'papermill', str(root / 'nbs' / 'run_harc.ipynb'),
                          str(tmp_path / 'x.ipynb'), '--cwd', str(root / 'nbs'), '-p', 'results_dir',
                          str(tmp_path / 'results'), '-p', 'experiment', '2024'], capture_output=True, text=True)
    out = res.stdout + res.stderr + (tmp_path / 'x.ipynb').read_text()
    assert res.returncode != 0 and 'experiment must be a folder name (a string)' in out, out[-2000:]
    assert not (tmp_path / 'results').exists() or not any((tmp_path / 'results').rglob('*.json'))


# --- 4. sweeps -------------------------------------------------------------------------------------

QUICK = dict(method='erm', epochs=1, patience=1, max_windows=64)


@pytest.mark.parametrize('kw,parts', [
    (dict(threads=10**6), ['threads must be in [1,']),
    (dict(threads=0), ['threads must be in [1,']),
    (dict(threads=2.5), ['threads must be an integer']),
    (dict(workers=0), ['workers must be in [1,']),
    (dict(workers=-1), ['workers must be in [1,']),
    (dict(workers=10**6), ['workers must be in [1,']),
    (dict(workers=True), ['workers must be an integer']),
])
@pytest.mark.parametrize('executor', [False, True])
def test_a_sweep_refuses_threads_and_workers_before_any_run(tmp_path, kw, parts, executor):
    if executor and 'workers' in kw and kw['workers'] == 10**6:
        pytest.skip('with an executor the workers are its own')
    ex = RecordingExecutor() if executor else None
    raised(lambda: run_sweep([make_config(**QUICK)], results_dir=tmp_path / 'r', out_dir=tmp_path / 'runs',
                             executor=ex, progress=False, **kw), ConfigError, *parts)
    assert ex is None or ex.cmds == []
    assert not (tmp_path / 'runs').exists() and not (tmp_path / 'r').exists()


def test_a_sweep_with_an_executor_takes_threads_up_to_the_cap(tmp_path):
    ex = RecordingExecutor()
    run_sweep([make_config(**QUICK)], results_dir=tmp_path / 'r', out_dir=tmp_path / 'runs', executor=ex,
              threads=64, progress=False)
    assert ' -p threads 64' in ex.cmds[0]
    raised(lambda: run_sweep([make_config(**QUICK)], results_dir=tmp_path / 'r', executor=RecordingExecutor(),
                             threads=1025, progress=False), ConfigError, 'threads must be in [1, 1024]')


def test_a_sweep_refuses_a_config_the_config_check_refuses(tmp_path):
    cfg = dict(make_config(**QUICK), experiment=2024)
    ex = RecordingExecutor()
    raised(lambda: run_sweep([cfg], results_dir=tmp_path / 'r', out_dir=tmp_path / 'runs', executor=ex,
                             progress=False), ConfigError, 'experiment must be a folder name (a string)')
    cfg = dict(make_config(**QUICK), batch_size=10**100)
    raised(lambda: run_sweep([cfg], results_dir=tmp_path / 'r', out_dir=tmp_path / 'runs', executor=ex,
                             progress=False), ConfigError, 'batch_size must be in [2, 4096]')
    assert ex.cmds == [] and not (tmp_path / 'runs').exists()


def test_a_sweep_prints_one_line_per_finished_run_without_a_bar(tmp_path, capsys):
    cfgs = [make_config(**dict(QUICK, seed=s)) for s in (0, 1)]
    results = tmp_path / 'r'
    path = record_path(cfgs[0], results)
    path.parent.mkdir(parents=True)

    class WritesOne(RecordingExecutor):
        "Reports both done; only the first leaves a record (with its Avg.), as a real run would."
        def submit(self, fn, cmd, *args):
            if not self.cmds:
                from prism_nb.experiment import run
                run(cfgs[0], results_dir=results, progress=False)
            return super().submit(fn, cmd, *args)

    s = run_sweep(cfgs, results_dir=results, out_dir=tmp_path / 'runs', executor=WritesOne(), progress=False)
    assert len(s['done']) == 2
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith('sweep [')]
    assert len(lines) == 2, err
    rec = json.loads(path.read_text())
    assert path.stem in lines[0] and f"Avg. {rec['avg']:.2f}" in lines[0] and ' s' in lines[0], lines
    assert record_path(cfgs[1], results).stem in lines[1] and 'no record' in lines[1], lines
