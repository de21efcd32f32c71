"""Data that brings its own mask: the example package's `synth` task with `min_length=24` has recordings of 24 to
64 steps, zero-padded to 64. It trains and is evaluated with every condition drawn inside the steps each window
observes (02_sampling's budget rule), the same way in its loader, in `evaluate(record, conditions=[...])` and in
`score_model`."""
import sys
from pathlib import Path

import pytest
import torch
from fastcore.test import test_eq as same

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'examples' / 'prism_nb_example'))  # the worked plugin package
from prism_nb_example.task import SYNTH_CONDITIONS, D_SYNTH, L_SYNTH, load_synth, synth_splits  # noqa: E402

from prism_nb.config import make_config  # noqa: E402
from prism_nb.sampling import observed_cells  # noqa: E402
from prism_nb.experiment import run
from prism_nb.rescore import evaluate, load_model, condition_test_set  # noqa: E402
from prism_nb.extend import score_model  # noqa: E402

VARLEN = dict(dataset='synth', min_length=24, n_per_domain=64)

def budget(windows, rate: float) -> torch.Tensor:
    "floor(L_i*rate)*D: the cells window i observes under any condition (L_i: its observed steps)."
    return (windows.m[..., 0].sum(1) * rate + 1e-9).floor().long() * D_SYNTH

def test_every_condition_keeps_each_windows_budget():
    "Each set observes floor(L_i*rate)*D cells of window i, under every condition, and never a padded cell."
    cfg = make_config(**VARLEN, method='erm', seed=0)
    data, (train, val, test) = load_synth(cfg), synth_splits(cfg)
    assert int(test.m[..., 0].sum(1).min()) < L_SYNTH  # the data really has windows of several lengths
    for c, x in data.tests.items():
        same(observed_cells(x.m), budget(test, cfg['rate']))
        same((x.m * (1 - test.m)).sum(), 0.)
    for x, own in [(data.train, train), (data.val, val)]:  # the source windows too, under Random
        same(observed_cells(x.m), budget(own, cfg['rate']))
        same((x.m * (1 - own.m)).sum(), 0.)

@pytest.mark.parametrize('method', ['erm', 'prism'])
def test_trains_and_evaluates_as_recorded(method, tmp_path):
    "A run on it, scored again from its record on every condition and as a plain module, gives its numbers."
    rec = run(dict(VARLEN, method=method, epochs=2, patience=2, seed=0,
                   pretrain_epochs=1 if method == 'prism' else None),
              results_dir=tmp_path, plugins=['prism_nb_example'], progress=False)
    same(list(rec['metrics']), list(SYNTH_CONDITIONS))
    same(evaluate(rec, conditions=list(SYNTH_CONDITIONS))['metrics'], rec['metrics'])
    scored = score_model(load_model(rec)[0], dataset='synth', severities=(.5,), min_length=24, n_per_domain=64)
    same(scored['metrics'], rec['metrics'])
    x = condition_test_set(rec['config'], 'Desync', masks=torch.ones(64, L_SYNTH, D_SYNTH))
    same(x.m, synth_splits(rec['config'])[2].m)  # explicit masks are kept inside what the data observes
