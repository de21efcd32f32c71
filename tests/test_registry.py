"""One registry and one task route (issue 35): a user's backbone from a plugin package (Mean-max of
examples/prism_nb_example) trains with PRISM and ERM through `run()` and with PRISM through
papermill, its records named after it; the built-in names (ERM, Random, harc, cnn) cannot be claimed
by a plugin and a user's name registered twice needs replace=True; the package's small Task (synth)
gives one config id per request through `run()`, `papermill nbs/run_harc.ipynb -p dataset ...` and a
2-config sweep."""
import json, os, subprocess, sys
from pathlib import Path
import pytest

from prism_nb.core import PluginError, config_id, load_plugins
from prism_nb.backbones import BACKBONES, BACKBONE_DISPLAY, register_backbone, make_backbone
from prism_nb.config import make_config, record_path
from prism_nb.records import read_record
from prism_nb.experiment import run
from prism_nb.sweep import sweep_configs, run_sweep

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / 'examples' / 'prism_nb_example'  # the example package, put on the path
PLUGIN = 'prism_nb_example'  # the plugin as runs and records name it: its module

TINY = dict(max_windows=64, epochs=1)

def python_env() -> dict:
    "The environment of a child process: the example package and this checkout ahead of the rest."
    path = os.pathsep.join([str(EXAMPLE), str(ROOT), os.environ.get('PYTHONPATH', '')])
    return {**os.environ, 'PYTHONPATH': path.rstrip(os.pathsep)}

@pytest.fixture(scope='module')
def plugin() -> str:
    "The example package, imported into this process (once: a later import finds it)."
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(EXAMPLE))
        load_plugins([PLUGIN])
    return PLUGIN

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

def test_a_custom_task_gives_one_config_id_by_run_papermill_and_sweep(plugin, tmp_path,
                                                                     monkeypatch):
    # the sweep's workers import the package too
    monkeypatch.setenv('PYTHONPATH', python_env()['PYTHONPATH'])
    request = dict(dataset='synth', method='erm', epochs=1, n_per_domain=32)
    want = config_id(make_config(**request))
    assert make_config(**request)['rate'] == 0.3  # the task's own default
    rec = run(request, results_dir=tmp_path / 'run', plugins=[plugin], progress=False)
    done = papermill(tmp_path, '-p', 'plugins', plugin, '-p', 'results_dir', str(tmp_path / 'papermill'),
                     *[x for k, v in request.items() for x in ('-p', k, str(v))])
    assert done.returncode == 0, done.stderr[-3000:]
    (by_papermill,) = (tmp_path / 'papermill' / 'synth').glob('*.json')
    cfgs = sweep_configs(['erm'], seeds=[0, 1], plugins=[plugin], dataset='synth', epochs=1,
                         n_per_domain=32)
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
    done = papermill(tmp_path, '-p', 'plugins', plugin, '-p', 'dataset', 'synth',
                     '-p', 'source', 'uci')
    assert done.returncode != 0 and "unknown parameter(s) ['source']" in done.stderr, done.stderr[-2000:]

# Every knob searched, or said why not (issue 59): a method's hyperparameters (its defaults(), less the run's seed and
# variant) are each drawn by its search_space or declared in fixed_knobs with the reason; the protocol refuses the rest.

def test_a_plugin_method_with_an_unsearched_knob_is_refused_naming_it(plugin):
    from prism_nb.core import ConfigError
    from prism_nb.algorithms import ERM, check_search_coverage
    class Knobby(ERM):  # its own knob, ERM's search (lr, weight_decay, batch_size) inherited
        @classmethod
        def defaults(cls): return {**super().defaults(), 'k_reg': 0.1}
        @classmethod
        def hparam_space(cls): return {**super().hparam_space(), 'k_reg': (0.0, 1.0)}
    with pytest.raises(ConfigError, match=r"Knobby's search does not cover its hyperparameters: not searched and "
                                          r"not declared fixed: 'k_reg'\. .*add it to search_space\(\) .*fixed_knobs\(\)"):
        check_search_coverage(Knobby)
    class Declared(Knobby):
        @classmethod
        def fixed_knobs(cls): return {'k_reg': 'kept at the published value'}
    space, fixed = check_search_coverage(Declared)
    assert sorted(space) == ['batch_size', 'lr', 'weight_decay'] and fixed == {'k_reg': 'kept at the published value'}

def test_every_method_searches_or_fixes_each_knob(plugin):
    from prism_nb.algorithms import BUILTIN_ALGORITHMS, algorithm_class, check_search_coverage
    # the built-ins, PRISM included, and the example's SpecDecoup (not what other tests registered in this process)
    for name in [*sorted(BUILTIN_ALGORITHMS), 'specdecoup']:
        space, fixed = check_search_coverage(name)
        knobs = set(algorithm_class(name).defaults()) - {'seed', 'variant'}
        assert knobs <= set(space) | set(fixed) and all(isinstance(r, str) and r for r in fixed.values()), name

def test_specdecoup_draws_its_own_knob(plugin):
    from prism_nb.algorithms import check_search_space, check_search_coverage, draw_hparams
    assert 'sd_reg' in check_search_space('specdecoup') and check_search_coverage('specdecoup')[1] == {}
    draw = draw_hparams('specdecoup', 1)
    assert set(draw) == {'lr', 'weight_decay', 'batch_size', 'sd_reg'} and 0 < draw['sd_reg'] <= 1, draw


def test_the_package_import_takes_over_a_notebook_copy_of_its_own_condition():
    "21a_mend's definitions run in one process (a notebook session, test_notebook_outputs), then prism_nb.mend imported."
    root = Path(__file__).resolve().parent.parent
    code = (
        "import json\n"
        "cells = json.load(open('nbs/21a_mend.ipynb'))['cells']\n"
        "src = [''.join(c['source']) for c in cells if c['cell_type'] == 'code']\n"
        "for s in src:\n"
        "    if s.startswith('#| export'):\n"
        "        exec(s.replace('from __future__ import annotations', ''), globals())\n"
        "from prism_nb.sampling import CONDITIONS\n"
        "assert 'One-burst' in CONDITIONS and CONDITIONS['One-burst'].__module__ == '__main__'\n"
        "import prism_nb.mend\n"
        "assert CONDITIONS['One-burst'] is prism_nb.mend.one_burst_condition, CONDITIONS['One-burst']\n"
        "print('ok')\n"
    )
    res = subprocess.run([sys.executable, '-c', code], cwd=root, capture_output=True, text=True)
    assert res.returncode == 0 and res.stdout.strip().endswith('ok'), res.stderr[-2000:]
