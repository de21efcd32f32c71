"""On a machine with a CUDA GPU: every method's training step under deterministic mode, bit-identical CUDA reruns,
a papermill run with `-p device cuda`, and the library notebooks' examples with every `fit`/`pretrain` on the GPU
(`PRISM_DEVICE=cuda`), so that a cell calling a trained model with inputs on another device fails.
Skipped without a GPU; the README says where and when it last ran."""
import json, os, subprocess, sys
from pathlib import Path
import pytest
import torch

from prism_nb.algorithms import make_algorithm, method_names, toy_problem
from prism_nb.backbones import BACKBONES
from prism_nb.engine import deterministic_mode, fit, model_device
from prism_nb.experiment import run
from prism_nb.core import ConfigError
from prism_nb.engine import check_device

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason='needs a CUDA GPU')

@pytest.mark.parametrize('method', method_names())
def test_every_method_steps_deterministically_on_cuda(method):
    "Each method x backbone takes two steps on the GPU in deterministic mode (an op with no deterministic kernel raises), twice alike."
    x = toy_problem(32, L=16, D=3, seed=1).to('cuda')
    for bb in BACKBONES:
        outs = []
        for _ in range(2):
            torch.manual_seed(0)
            algo = make_algorithm(method, n_features=3, seq_len=16, n_classes=3, n_domains=4, backbone=bb).to('cuda')
            with deterministic_mode():
                if hasattr(algo, 'pretrain'): algo.pretrain(x, epochs=1, batch_size=16, progress=False)
                logs = [algo.update(x) for _ in range(2)]
            outs.append([{k: float(v) for k, v in o.items()} for o in logs] + [[p.detach().cpu() for p in algo.parameters()]])
        assert outs[0][:-1] == outs[1][:-1], (method, bb)
        assert all(torch.equal(a, b) for a, b in zip(outs[0][-1], outs[1][-1])), (method, bb)

def test_fit_moves_the_model_and_predict_follows():
    tr, va = toy_problem(96, seed=0), toy_problem(48, seed=1)  # on the CPU
    torch.manual_seed(0)
    algo = make_algorithm('erm', n_features=3, seq_len=32, n_classes=3, n_domains=4)
    log = fit(algo, tr, va, epochs=2, batch_size=32, device='cuda', progress=False)
    assert model_device(algo).type == 'cuda' and log['epochs_run'] == 2

def test_cuda_run_reproduces_bit_for_bit(tmp_path):
    cfg = dict(method='prism', epochs=2, patience=2, pretrain_epochs=2, max_windows=512)
    a = run(cfg, results_dir=tmp_path / 'a', device='cuda', progress=False)
    b = run(cfg, results_dir=tmp_path / 'b', device='cuda', progress=False)
    strip = lambda h: [{k: v for k, v in e.items() if k != 'seconds'} for e in h]
    assert a['metrics'] == b['metrics'] and strip(a['history']) == strip(b['history'])
    assert a['device'].startswith('cuda') and a['deterministic'] is True
    assert {'gpu', 'capability', 'cuda', 'cudnn'} <= set(a['gpu'])

def test_bad_cuda_index_fails_before_work():
    with pytest.raises(ConfigError, match='GPU'): check_device(f'cuda:{torch.cuda.device_count()}')

def test_papermill_run_on_cuda(root, tmp_path):
    cmd = [sys.executable, '-m', 'papermill', str(root / 'nbs' / 'run_harc.ipynb'), str(tmp_path / 'out.ipynb'), '--cwd', str(root / 'nbs'),
           '-p', 'results_dir', str(tmp_path / 'results'), '-p', 'device', 'cuda:0']
    for k, v in dict(method='erm', epochs=2, patience=2, max_windows=256).items(): cmd += ['-p', k, str(v)]
    subprocess.run(cmd, check=True, capture_output=True)
    rec = json.loads(next((tmp_path / 'results' / 'harc').glob('*.json')).read_text())
    assert rec['device'] == 'cuda:0' and rec['gpu']['gpu']

def test_notebook_examples_follow_the_model_device(root):
    "The library notebooks' inline tests with every fit and pretraining on the GPU, their inputs on the CPU."
    nbdev_test = Path(sys.executable).parent / 'nbdev_test'
    cmd = [str(nbdev_test) if nbdev_test.exists() else 'nbdev_test', '--n_workers', '4', '--skip_file_re', os.environ.get('PRISM_GPU_SKIP', '^run_|^paper|^results')]
    res = subprocess.run(cmd, cwd=root, env={**os.environ, 'PRISM_DEVICE': 'cuda'}, capture_output=True, text=True)
    assert res.returncode == 0, (res.stdout + res.stderr)[-5000:]
