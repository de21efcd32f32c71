"""One registry and one task route (issue 35): a user's backbone from a plugin file trains with PRISM and
ERM through `run()` and with PRISM through papermill, its records named after it; the built-in names
(ERM, Random, harc, cnn) cannot be claimed by a plugin and a user's name registered twice needs
replace=True; a small custom Task from a plugin gives one config id per request through `run()`,
`papermill nbs/run_harc.ipynb -p dataset ...` and a 2-config sweep."""
import json, subprocess, sys
from pathlib import Path
import pytest

from prism_nb.core import PluginError, config_id, load_plugins
from prism_nb.backbones import BACKBONES, BACKBONE_DISPLAY, register_backbone, make_backbone
from prism_nb.config import make_config, record_path
from prism_nb.records import read_record
from prism_nb.experiment import run
from prism_nb.sweep import sweep_configs, run_sweep

ROOT = Path(__file__).resolve().parent.parent

PLUGIN = '''"A user's backbone and a small task of waves, registered when imported."
import torch
import torch.nn as nn
from prism_nb.core import ISMTS, derive_seed
from prism_nb.backbones import register_backbone
from prism_nb.engine import predict, percent_correct
from prism_nb.config import Task, TaskData, register_task, check_real, check_int
from prism_nb.harc import observe

class MeanMax(nn.Module):
    "Per channel, the mean and the largest of the observed values, through one linear layer."
    def __init__(self, n_features, seq_len, out_dim=16):
        super().__init__()
        self.out_dim, self.lin = out_dim, nn.Linear(2 * n_features, out_dim)
    def forward(self, v, m, t):
        mean = v.sum(1) / m.sum(1).clamp(min=1)
        top = v.masked_fill(m == 0, -1e4).amax(1) * (m.sum(1) > 0)
        return torch.relu(self.lin(torch.cat([mean, top], -1)))

register_backbone('meanmax', MeanMax, display='Mean-max')

def waves(domain, n, seed):
    "n fully observed windows of 24 steps, 2 channels: class k has k+1 cycles, noisier with the domain."
    g = torch.Generator().manual_seed(derive_seed(seed, 'waves', domain))
    y = torch.arange(n) % 3
    t = torch.linspace(0, 1, 24).expand(n, 24).contiguous()
    phase = 6.28 * torch.rand(n, 1, 2, generator=g)
    v = torch.sin(2 * torch.pi * (y[:, None, None] + 1) * t[..., None] + phase)
    v = v + .1 * (domain + 1) * torch.randn(n, 24, 2, generator=g)
    return ISMTS(v, torch.ones_like(v), t, y.long(), torch.full((n,), domain, dtype=torch.long))

def check_waves(cfg):
    cfg['rate'] = check_real('rate', cfg['rate'], 0, 1, lo_open=True)
    cfg['n'] = check_int('n', cfg['n'], 8)

def load_waves(cfg):
    s, r, n = cfg['seed'], cfg['rate'], cfg['n']
    train, val, test = ISMTS.cat([waves(0, n, s), waves(1, n, s)]), waves(0, n // 2, s + 1), waves(2, n, s)
    return TaskData(train=observe(train, 'Random', r, derive_seed(s, 'train')),
                    val=observe(val, 'Random', r, derive_seed(s, 'val')),
                    tests={c: observe(test, c, r, derive_seed(s, 'test', c)) for c in ('Random', 'First')},
                    info=dict(n_classes=3, n_domains=2, n_features=2, seq_len=24))

def evaluate_waves(algo, data, cfg):
    return dict(metrics={c: percent_correct(predict(algo, x).cpu(), x.y) for c, x in data.tests.items()})

register_task(Task(name='waves', display='Waves', defaults=dict(rate=0.5, n=32), check=check_waves,
                   load=load_waves, evaluate=evaluate_waves, conditions=('Random', 'First'),
                   record_stem=lambda cfg: ((), f"{cfg['method']}_{cfg['backbone']}_s{cfg['seed']}")))
'''

TINY = dict(max_windows=64, epochs=1)

def python_env() -> dict:
    "The environment of a child process: this checkout ahead of whatever else is installed."
    import os
    path = os.pathsep.join([str(ROOT), os.environ.get('PYTHONPATH', '')]).rstrip(os.pathsep)
    return {**os.environ, 'PYTHONPATH': path}

@pytest.fixture(scope='module')
def plugin(tmp_path_factory) -> str:
    "The plugin file, outside the repository, imported into this process."
    path = tmp_path_factory.mktemp('outside') / 'waves_plugin.py'
    path.write_text(PLUGIN)
    load_plugins([str(path.resolve())])
    return str(path.resolve())

def papermill(out: Path, *params) -> subprocess.CompletedProcess:
    "Run nbs/run_harc.ipynb with papermill from the repository root."
    cmd = [sys.executable, '-m', 'papermill', 'nbs/run_harc.ipynb', str(out / 'run.ipynb'), *params]
    return subprocess.run(cmd, cwd=ROOT, env=python_env(), capture_output=True, text=True)

def test_a_user_backbone_trains_with_prism_and_erm(plugin, tmp_path):
    assert BACKBONE_DISPLAY['meanmax'] == 'Mean-max'
    assert type(make_backbone('meanmax', 3, 10)).__name__ == 'MeanMax'
    for method, pre in (('prism', 1), ('erm', None)):
        cfg = dict(method=method, backbone='meanmax', pretrain_epochs=pre, **TINY)
        rec = run(cfg, results_dir=tmp_path, plugins=[plugin], progress=False)
        path = record_path(make_config(**cfg), tmp_path)
        assert path.exists() and path.name.startswith(f'{method}_meanmax_s0_'), path
        assert rec['config']['backbone'] == 'meanmax' and rec['plugins'] == [plugin]
    assert len(read_record(path)['metrics']) == 8

def test_papermill_trains_prism_on_a_plugin_backbone(plugin, tmp_path):
    done = papermill(tmp_path, '-p', 'plugins', plugin, '-p', 'backbone', 'meanmax', '-p', 'method', 'prism',
                     '-p', 'pretrain_epochs', '1', '-p', 'results_dir', str(tmp_path / 'results'),
                     *[x for k, v in TINY.items() for x in ('-p', k, str(v))])
    assert done.returncode == 0, done.stderr[-3000:]
    records = sorted((tmp_path / 'results' / 'harc').glob('*.json'))
    assert [r.name[:len('prism_meanmax_s0_')] for r in records] == ['prism_meanmax_s0_'], records

CLAIMS = {'ERM': "from prism_nb.algorithms import ERM, register_algorithm\n"
                 "@register_algorithm('ERM')\nclass ERM(ERM): pass\n",
          'Random': "from prism_nb.sampling import register_condition\n"
                    "@register_condition('Random')\ndef random_condition(n, L, D, steps, g): return None\n",
          'harc': "import dataclasses\nfrom prism_nb.harc import HARC\nfrom prism_nb.config import register_task\n"
                  "register_task(dataclasses.replace(HARC, display='mine'), replace=True)\n",
          'cnn': "import torch.nn as nn\nfrom prism_nb.backbones import register_backbone\n"
                 "register_backbone('cnn', lambda n_features, seq_len: nn.Identity(), replace=True)\n",
          'erm': "from prism_nb.algorithms import IRM, register_algorithm\nregister_algorithm('ERM')(IRM)\n",
          'First': "from prism_nb.sampling import register_condition, concentrated_condition\n"
                   "register_condition('First')(concentrated_condition('first', 0.9))\n",
          'seft': "from prism_nb.backbones import SeFT, register_backbone\nregister_backbone('seft', SeFT)\n"}

@pytest.mark.parametrize('name', list(CLAIMS))  # erm, First, seft: the package's definitions, by a plugin
def test_a_plugin_cannot_claim_a_built_in_name(name, tmp_path):
    p = tmp_path / f'claim_{name}.py'; p.write_text(CLAIMS[name])
    key = name if name in ('Random', 'First') else name.lower()  # method and backbone names are lower case
    with pytest.raises(PluginError, match=f"'{key}' is built in and cannot be replaced"):
        load_plugins([str(p)])

def test_a_user_backbone_registered_twice_needs_replace(plugin):
    from torch import nn
    class Other(nn.Module): pass
    with pytest.raises(ValueError, match="backbone 'meanmax' is already registered; pass replace=True"):
        register_backbone('meanmax', Other)
    with BACKBONES.temporary('meanmax', Other, replace=True): assert BACKBONES['MeanMax'] is Other
    assert BACKBONES['meanmax'].__name__ == 'MeanMax' and BACKBONE_DISPLAY['meanmax'] == 'Mean-max'
    with pytest.raises(ValueError, match="unknown backbone 'nonet'; valid backbones: cnn, cnn_m"):
        make_config(backbone='nonet')

def test_a_custom_task_gives_one_config_id_by_run_papermill_and_sweep(plugin, tmp_path):
    request = dict(dataset='waves', method='erm', epochs=1)
    want = config_id(make_config(**request))
    assert make_config(**request)['rate'] == 0.5  # the task's own default
    rec = run(request, results_dir=tmp_path / 'run', plugins=[plugin], progress=False)
    done = papermill(tmp_path, '-p', 'plugins', plugin, '-p', 'results_dir', str(tmp_path / 'papermill'),
                     *[x for k, v in request.items() for x in ('-p', k, str(v))])
    assert done.returncode == 0, done.stderr[-3000:]
    (by_papermill,) = (tmp_path / 'papermill' / 'waves').glob('*.json')
    cfgs = sweep_configs(['erm'], seeds=[0, 1], plugins=[plugin], dataset='waves', epochs=1)
    summary = run_sweep(cfgs, plugins=[plugin], results_dir=tmp_path / 'sweep', out_dir=tmp_path / 'runs',
                        progress=False)
    assert summary['failed'] == [] and len(summary['done']) == 2, summary
    by_sweep = read_record(record_path(cfgs[0], tmp_path / 'sweep'))
    ids = [config_id(rec['config']), config_id(json.loads(by_papermill.read_text())['config']),
           config_id(by_sweep['config']), config_id(cfgs[0])]
    assert ids == [want] * 4, ids
    assert by_papermill.name == record_path(make_config(**request), tmp_path / 'papermill').name
    assert config_id(cfgs[1]) != want  # the second seed is another config

def test_a_key_the_task_does_not_declare_is_refused(plugin, tmp_path):
    done = papermill(tmp_path, '-p', 'plugins', plugin, '-p', 'dataset', 'waves', '-p', 'source', 'uci')
    assert done.returncode != 0 and "unknown parameter(s) ['source']" in done.stderr, done.stderr[-2000:]
