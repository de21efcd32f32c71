"""Plugins from outside the repository, with no edit to the package: a .py file defining a method and a sampling
condition runs through papermill (nbs/run_harc.ipynb -p plugins), a two-worker sweep, and evaluate() of its record in a
new Python process when asked to load the record's plugins (plugins='record'; without it, they are named,
never imported); a missing plugin file is named, also when a record's plugin was deleted; an installed
package's entry point (group prism_nb.plugins) registers its method in a fresh process, not passed."""
import json, os, subprocess, sys
from pathlib import Path
import pytest

from prism_nb.core import PluginError, load_plugins
from prism_nb.sampling import HARC_CONDITIONS
from prism_nb.config import make_config, record_path
from prism_nb.records import read_record
from prism_nb.experiment import run, run_from_notebook
from prism_nb.sweep import sweep_configs, run_sweep

ROOT = Path(__file__).resolve().parent.parent
TINY = dict(max_windows=64, epochs=1)

PLUGIN = '''"A method and a sampling condition, registered when imported."
import torch
import torch.nn.functional as F
from prism_nb.algorithms import ERM, register_algorithm
from prism_nb.sampling import register_condition

@register_algorithm('PlugSD')
class PlugSD(ERM):
    "Spectral decoupling: cross-entropy plus sd_reg x the mean squared logit."
    group, needs_domains = 'dg', False
    @classmethod
    def defaults(cls): return {**super().defaults(), 'sd_reg': 0.1}
    @classmethod
    def hparam_space(cls): return {**super().hparam_space(), 'sd_reg': (0., 1.)}
    def update(self, batch):
        logits = self.predict(batch.v, batch.m, batch.t)
        loss = F.cross_entropy(logits, batch.y) + self.hparams['sd_reg'] * logits.pow(2).mean()
        self.optimizer.zero_grad(set_to_none=True); loss.backward(); self.optimizer.step()
        return {'loss': loss.detach()}

@register_condition('PlugBurst')
def plug_burst(n, L, D, steps, g):
    "All channels at `steps` consecutive steps, the start drawn per window."
    start = torch.randint(0, L - steps + 1, (n, 1, 1), generator=g)
    step = torch.arange(L).view(1, L, 1)
    return ((step >= start) & (step < start + steps)).expand(n, L, D).float()
'''

def python_env(*first) -> dict:
    "The environment of a child process: `first` and this checkout ahead of whatever else is installed, nothing of the plugin's folder."
    return {**os.environ, 'PYTHONPATH': os.pathsep.join([*map(str, first), str(ROOT), os.environ.get('PYTHONPATH', '')]).rstrip(os.pathsep)}

def fresh_python(code: str, *first) -> subprocess.CompletedProcess:
    "Run `code` in a new Python process from the repository root."
    return subprocess.run([sys.executable, '-c', code], cwd=ROOT, env=python_env(*first), capture_output=True, text=True)

@pytest.fixture(scope='module')
def plugin(tmp_path_factory) -> Path:
    "The plugin file, in a folder outside the repository."
    path = tmp_path_factory.mktemp('outside') / 'my_plugin.py'
    assert not path.resolve().is_relative_to(ROOT)
    path.write_text(PLUGIN)
    return path.resolve()

@pytest.fixture(scope='module')
def papermill_record(plugin, tmp_path_factory) -> Path:
    "The record of the plugin's method trained on the plugin's condition, run by papermill from the repository root."
    out = tmp_path_factory.mktemp('papermill')
    cmd = [sys.executable, '-m', 'papermill', 'nbs/run_harc.ipynb', str(out / 'run.ipynb'), '-p', 'plugins', str(plugin),
           '-p', 'method', 'plugsd', '-p', 'train_condition', 'PlugBurst', '-p', 'results_dir', str(out / 'results')]
    for k, v in TINY.items(): cmd += ['-p', k, str(v)]
    done = subprocess.run(cmd, cwd=ROOT, env=python_env(), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    records = sorted((out / 'results' / 'harc').glob('*.json'))
    assert len(records) == 1, records
    return records[0]

def test_papermill_runs_a_plugin_method_on_a_plugin_condition(papermill_record, plugin):
    rec = json.loads(papermill_record.read_text())
    assert rec['config']['method'] == 'plugsd' and rec['config']['train_condition'] == 'PlugBurst'
    assert papermill_record.name.startswith('plugsd_cnn_onPlugBurst_s0_')
    assert rec['plugins'] == [str(plugin)]  # the record names the file it needs
    assert list(rec['metrics']) == sorted(HARC_CONDITIONS + ['PlugBurst'])  # tested on the eight and on its own condition

def test_evaluate_in_a_new_process_imports_the_recorded_plugin_when_asked(papermill_record, plugin):
    rec = json.loads(papermill_record.read_text())
    probe = (f"import json; from prism_nb.experiment import evaluate; p = {str(papermill_record)!r}; "
             "print(json.dumps([evaluate(p, plugins='record')['metrics'], "
             "evaluate(p, conditions=['PlugBurst', 'Random'])['metrics']]))")
    done = fresh_python(probe)
    assert done.returncode == 0, done.stderr[-3000:]
    own, chosen = json.loads(done.stdout.splitlines()[-1])
    assert own == rec['metrics']
    assert chosen == {c: rec['metrics'][c] for c in ['PlugBurst', 'Random']}
    done = fresh_python(f"from prism_nb.experiment import evaluate; evaluate({str(papermill_record)!r})")
    last = done.stderr.strip().splitlines()[-1]
    assert done.returncode != 0 and 'PluginError' in last and "plugins='record'" in last, last
    assert f"plugin(s) ['{plugin}'], which this process has not loaded" in last, last

def test_two_worker_sweep_hands_the_plugin_to_every_worker(plugin, tmp_path, monkeypatch):
    monkeypatch.setenv('PYTHONPATH', python_env()['PYTHONPATH'])  # the workers' kernels import this checkout
    cfgs = sweep_configs(['plugsd'], seeds=[0, 1], plugins=[str(plugin)], **TINY)
    summary = run_sweep(cfgs, workers=2, plugins=[str(plugin)], results_dir=tmp_path / 'results', out_dir=tmp_path / 'runs', progress=False)
    assert summary['failed'] == [] and len(summary['done']) == 2, summary
    for c in cfgs:
        rec = read_record(record_path(c, tmp_path / 'results'))
        assert rec['plugins'] == [str(plugin)] and list(rec['metrics']) == sorted(HARC_CONDITIONS)

def test_a_missing_plugin_file_is_named(tmp_path):
    missing = tmp_path / 'not_there.py'
    for call in [lambda: load_plugins([str(missing)]), lambda: sweep_configs(['erm'], seeds=[0], plugins=[str(missing)]),
                 lambda: run(dict(method='erm', **TINY), results_dir=tmp_path / 'r', plugins=[str(missing)]),
                 lambda: run_from_notebook(dict(method='erm', plugins=str(missing), results_dir=str(tmp_path / 'r')))]:
        with pytest.raises(PluginError, match=f'plugin file {missing} does not exist'): call()
    assert not (tmp_path / 'r' / 'harc').exists() or not list((tmp_path / 'r' / 'harc').glob('*.json'))

def test_a_record_whose_plugin_was_deleted_names_it_in_a_new_process(tmp_path):
    gone = tmp_path / 'gone_plugin.py'
    gone.write_text("from prism_nb.algorithms import ERM, register_algorithm\n\n"
                    "@register_algorithm('GoneERM')\nclass GoneERM(ERM):\n    'ERM, from a plugin deleted after the run.'\n")
    rec = run(dict(method='goneerm', **TINY), results_dir=tmp_path / 'results', plugins=[str(gone)], progress=False)
    path = record_path(rec['config'], tmp_path / 'results')
    gone.unlink()
    done = fresh_python(f"from prism_nb.experiment import evaluate as e; e({str(path)!r}, plugins='record')")
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert 'PluginError' in last and f'plugin file {gone} does not exist' in last, last
    done = fresh_python(f"from prism_nb.records import read_record; read_record({str(path)!r})")
    last = done.stderr.strip().splitlines()[-1]
    assert done.returncode != 0 and 'PluginError' in last, last
    assert f"plugin(s) ['{gone}'], which this process has not loaded" in last, last

@pytest.fixture
def installed(tmp_path) -> Path:
    "A folder holding a tiny installed distribution: a module and its .dist-info declaring a prism_nb.plugins entry point."
    site = tmp_path / 'site'
    (site / 'ep_plugin-0.1.dist-info').mkdir(parents=True)
    (site / 'ep_plugin.py').write_text("import torch\nfrom prism_nb.algorithms import ERM, register_algorithm\n"
                                       "from prism_nb.sampling import register_condition\n\n"
                                       "@register_algorithm('EPMethod')\nclass EPMethod(ERM):\n    'ERM, registered by an installed package.'\n\n"
                                       "@register_condition('EPFirstHalf')\ndef ep_first(n, L, D, steps, g):\n"
                                       "    'The first `steps` steps of every channel.'\n"
                                       "    return (torch.arange(L) < steps).view(1, L, 1).expand(n, L, D).float()\n")
    (site / 'ep_plugin-0.1.dist-info' / 'METADATA').write_text('Metadata-Version: 2.1\nName: ep-plugin\nVersion: 0.1\n')
    (site / 'ep_plugin-0.1.dist-info' / 'entry_points.txt').write_text('[prism_nb.plugins]\nep_plugin = ep_plugin\n')
    return site

def test_an_entry_point_plugin_registers_itself_for_sweeps_and_runs(installed):
    done = fresh_python("from prism_nb.sweep import sweep_configs; print(sweep_configs(['epmethod'], seeds=[0])[0]['method'])", installed)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ['epmethod']

def test_an_entry_point_plugin_registers_itself_for_make_config(installed):
    done = fresh_python("from prism_nb.config import make_config; print(make_config(method='epmethod')['method'])", installed)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ['epmethod']

def test_an_entry_point_condition_is_found_without_being_passed(installed):
    done = fresh_python("from prism_nb.sampling import condition_masks; print(int(condition_masks('EPFirstHalf', 2).sum()))", installed)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == [str(2 * 25 * 6)]  # HAR-C's shape: 25 steps of 128, 6 channels, 2 windows
