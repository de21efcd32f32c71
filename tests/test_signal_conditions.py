"""Conditions that see the signal (nbs/02_sampling.ipynb): one registered from a plugin file trains, evaluates,
sweeps and shows in a severity curve like any condition; one that breaks the budget is refused before any work."""
from pathlib import Path
import pytest

from prism_nb.core import ConfigError, load_plugins
from prism_nb.config import make_config, record_path
from prism_nb.experiment import run
from prism_nb.extend import score_model
from prism_nb.records import read_record
from prism_nb.rescore import evaluate, load_model
from prism_nb.sampling import CONDITIONS, sees_values
from prism_nb.sweep import run_sweep

PLUGIN = '''
import torch
from prism_nb.sampling import register_signal_condition

@register_signal_condition('Peaks')
def peaks(v, m, steps, g):
    "Per channel, the `steps` samples of largest magnitude: a sensor that reports its extremes."
    idx = (v.abs() * m - 1e9 * (1 - m)).topk(steps, dim=1).indices
    return torch.zeros_like(v).scatter_(1, idx, 1.0)

@register_signal_condition('Greedy')
def greedy(v, m, steps, g):
    "Breaks the budget: one sample too many per channel."
    idx = v.abs().topk(steps + 1, dim=1).indices
    return torch.zeros_like(v).scatter_(1, idx, 1.0)
'''
TINY = dict(max_windows=64, epochs=1)


@pytest.fixture(scope='module')
def plugin(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp('plugin') / 'peaks_plugin.py'
    path.write_text(PLUGIN)
    load_plugins([str(path)])
    return str(path)


def test_registered_from_a_plugin(plugin):
    assert sees_values('Peaks') and 'Peaks' in CONDITIONS and not sees_values('Random')


def test_trains_and_evaluates(plugin, tmp_path):
    rec = run(dict(method='erm', train_condition='Peaks', **TINY), results_dir=tmp_path, progress=False,
              plugins=[plugin])
    assert 'Peaks' in rec['metrics'] and 0 <= rec['metrics']['Peaks'] <= 100
    path = record_path(rec['config'], tmp_path)
    again = evaluate(read_record(path), conditions=['Peaks', 'Send-on-delta'], plugins=[plugin])
    assert again['metrics']['Peaks'] == pytest.approx(rec['metrics']['Peaks'])  # the same masks, the same model
    model, cfg = load_model(read_record(path), plugins=[plugin])
    curve = score_model(model, conditions=['Random', 'Peaks'], severities=(0.0, 1.0), max_windows=64)
    assert set(curve['severity']['Peaks']) == {'0', '1'}
    assert curve['severity']['Peaks']['0'] == pytest.approx(curve['metrics']['Random'])  # 0 shifted: all Random


def test_sweeps(plugin, tmp_path):
    cfg = make_config(method='erm', train_condition='Peaks', seed=1, **TINY)
    out = run_sweep([cfg], workers=1, results_dir=tmp_path, out_dir=tmp_path / 'runs', plugins=[plugin],
                    progress=False)
    assert out['done'] == [record_path(cfg, tmp_path).stem], out['failed']


def test_a_condition_off_budget_is_refused_before_any_work(plugin, tmp_path):
    with pytest.raises(ConfigError, match='Greedy'):
        run(dict(method='erm', train_condition='Greedy', **TINY), results_dir=tmp_path, progress=False,
            plugins=[plugin])
    assert not any(Path(tmp_path).rglob('*.json'))
