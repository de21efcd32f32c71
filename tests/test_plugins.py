"""Plugins from outside the package, with no edit to it: the worked plugin package
examples/prism_nb_example (its method SpecDecoup and its sampling condition Burst), copied to a
folder outside the repository and put on the path, runs through papermill (nbs/run_harc.ipynb
-p plugins), a two-worker sweep, and evaluate() of its record in a new Python process when asked to
load the record's plugins (plugins='record'; without it, they are named, never imported); the
package folder itself is a plugin too; a missing plugin file is named, also when a record's plugin
was deleted; the same package, pip-installed into a temporary folder and never named, registers its
method, condition, backbone and task in a fresh process through its entry point (group
prism_nb.plugins), papermill included."""
import json, os, shutil, subprocess, sys
from pathlib import Path
import pytest

from prism_nb.core import PluginError, load_plugins
from prism_nb.sampling import HARC_CONDITIONS
from prism_nb.config import record_path
from prism_nb.records import read_record
from prism_nb.experiment import run, run_from_notebook
from prism_nb.sweep import sweep_configs, run_sweep

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / 'examples' / 'prism_nb_example'  # the worked plugin package (see its README)
PLUGIN = 'prism_nb_example'  # the plugin as runs and records name it: its module
TINY = dict(max_windows=64, epochs=1)

def copy_example(to: Path) -> Path:
    "A copy of the example package's source at `to`, without what a build or a run left in it."
    left = shutil.ignore_patterns('build', '*.egg-info', '__pycache__')
    return Path(shutil.copytree(EXAMPLE, to, ignore=left))

def python_env(*first) -> dict:
    "The environment of a child process: `first` and this checkout ahead of what is installed."
    path = [*map(str, first), str(ROOT), os.environ.get('PYTHONPATH', '')]
    return {**os.environ, 'PYTHONPATH': os.pathsep.join(path).rstrip(os.pathsep)}

def fresh_python(code: str, *first) -> subprocess.CompletedProcess:
    "Run `code` in a new Python process from the repository root."
    return subprocess.run([sys.executable, '-c', code], cwd=ROOT, env=python_env(*first),
                          capture_output=True, text=True)

def papermill(out: Path, *params, env: dict) -> subprocess.CompletedProcess:
    "Run nbs/run_harc.ipynb with papermill from the repository root."
    cmd = [sys.executable, '-m', 'papermill', 'nbs/run_harc.ipynb', str(out / 'run.ipynb'), *params]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)

@pytest.fixture(scope='module')
def outside(tmp_path_factory) -> Path:
    "A folder outside the repository holding the package's module, on this process's path."
    folder = copy_example(tmp_path_factory.mktemp('outside') / 'example')
    assert not folder.resolve().is_relative_to(ROOT)
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(folder))
        load_plugins([PLUGIN])  # imported once per process: later calls find it
    return folder

@pytest.fixture(scope='module')
def papermill_record(outside, tmp_path_factory) -> Path:
    "The record of the plugin's method trained on the plugin's condition, run by papermill."
    out = tmp_path_factory.mktemp('papermill')
    params = ['-p', 'plugins', PLUGIN, '-p', 'method', 'specdecoup',
              '-p', 'train_condition', 'Burst', '-p', 'results_dir', str(out / 'results')]
    for k, v in TINY.items(): params += ['-p', k, str(v)]
    done = papermill(out, *params, env=python_env(outside))
    assert done.returncode == 0, done.stderr[-3000:]
    records = sorted((out / 'results' / 'harc').glob('*.json'))
    assert len(records) == 1, records
    return records[0]

def test_papermill_runs_a_plugin_method_on_a_plugin_condition(papermill_record):
    rec = json.loads(papermill_record.read_text())
    assert rec['config']['method'] == 'specdecoup' and rec['config']['train_condition'] == 'Burst'
    assert papermill_record.name.startswith('specdecoup_cnn_onBurst_s0_')
    assert rec['plugins'] == [PLUGIN]  # the record names the plugin it needs
    # tested on the eight and on its own condition
    assert list(rec['metrics']) == sorted(HARC_CONDITIONS + ['Burst'])

def test_evaluate_in_a_new_process_imports_the_recorded_plugin_when_asked(papermill_record,
                                                                         outside):
    rec = json.loads(papermill_record.read_text())
    probe = (f"import json; from prism_nb.rescore import evaluate; p = {str(papermill_record)!r}; "
             "print(json.dumps([evaluate(p, plugins='record')['metrics'], "
             "evaluate(p, conditions=['Burst', 'Random'])['metrics']]))")
    done = fresh_python(probe, outside)
    assert done.returncode == 0, done.stderr[-3000:]
    own, chosen = json.loads(done.stdout.splitlines()[-1])
    assert own == rec['metrics']
    assert chosen == {c: rec['metrics'][c] for c in ['Burst', 'Random']}
    # importable in this process, yet not imported: nobody asked
    done = fresh_python("from prism_nb.rescore import evaluate; "
                        f"evaluate({str(papermill_record)!r})", outside)
    last = done.stderr.strip().splitlines()[-1]
    assert done.returncode != 0 and 'PluginError' in last and "plugins='record'" in last, last
    assert f"plugin(s) ['{PLUGIN}'], which this process has not loaded" in last, last

def test_two_worker_sweep_hands_the_plugin_to_every_worker(outside, tmp_path, monkeypatch):
    # the workers' kernels import this checkout and the package
    monkeypatch.setenv('PYTHONPATH', python_env(outside)['PYTHONPATH'])
    cfgs = sweep_configs(['specdecoup'], seeds=[0, 1], plugins=[PLUGIN], **TINY)
    summary = run_sweep(cfgs, workers=2, plugins=[PLUGIN], results_dir=tmp_path / 'results',
                        out_dir=tmp_path / 'runs', progress=False)
    assert summary['failed'] == [] and len(summary['done']) == 2, summary
    for c in cfgs:
        rec = read_record(record_path(c, tmp_path / 'results'))
        assert rec['plugins'] == [PLUGIN] and list(rec['metrics']) == sorted(HARC_CONDITIONS)

def test_the_package_folder_is_a_plugin_too(outside):
    folder = outside / 'prism_nb_example'  # not on this child's path: imported by its path
    done = fresh_python(f"from prism_nb.core import load_plugins; load_plugins([{str(folder)!r}]); "
                        "from prism_nb.config import make_config; "
                        "c = make_config(dataset='synth', method='specdecoup', "
                        "backbone='meanmax'); "
                        "print(c['dataset'], c['method'], c['backbone'])")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ['synth', 'specdecoup', 'meanmax']

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
    done = fresh_python(f"from prism_nb.rescore import evaluate as e; e({str(path)!r}, plugins='record')")
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert 'PluginError' in last and f'plugin file {gone} does not exist' in last, last
    done = fresh_python(f"from prism_nb.records import read_record; read_record({str(path)!r})")
    last = done.stderr.strip().splitlines()[-1]
    assert done.returncode != 0 and 'PluginError' in last, last
    assert f"plugin(s) ['{gone}'], which this process has not loaded" in last, last

@pytest.fixture(scope='module')
def installed(tmp_path_factory) -> Path:
    "The example package pip-installed (offline, from a copy of its source) into a folder."
    tmp = tmp_path_factory.mktemp('installed')
    source, site = copy_example(tmp / 'source'), tmp / 'site'
    cmd = [sys.executable, '-m', 'pip', 'install', '--quiet', '--no-deps', '--no-index',
           '--no-build-isolation', '--target', str(site), str(source)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return site  # a folder holding the module and its .dist-info, entry point included

def test_an_entry_point_plugin_registers_itself_for_sweeps_and_runs(installed):
    done = fresh_python("from prism_nb.sweep import sweep_configs; "
                        "print(sweep_configs(['specdecoup'], seeds=[0])[0]['method'])", installed)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ['specdecoup']

def test_an_entry_point_plugin_registers_itself_for_make_config(installed):
    done = fresh_python("from prism_nb.config import make_config; "
                        "from prism_nb.core import loaded_entry_points as eps; "
                        "print(make_config(method='specdecoup')['method'], "
                        "*[e['dist'] for e in eps()])", installed)
    assert done.returncode == 0, done.stderr[-2000:]
    # imported through the installed distribution's entry point
    assert done.stdout.split() == ['specdecoup', 'prism-nb-example']

def test_an_entry_point_condition_is_found_without_being_passed(installed):
    done = fresh_python("from prism_nb.sampling import condition_masks; "
                        "print(int(condition_masks('Burst', 2).sum()))", installed)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == [str(2 * 25 * 6)]  # HAR-C's shape: 25 steps of 128, 6 channels, 2 windows

def test_papermill_takes_an_installed_method_backbone_and_task_by_name(installed, tmp_path):
    # no plugins: the entry point brings all three
    done = papermill(tmp_path, '-p', 'dataset', 'synth', '-p', 'method', 'specdecoup',
                     '-p', 'backbone', 'meanmax', '-p', 'epochs', '1', '-p', 'n_per_domain', '32',
                     '-p', 'results_dir', str(tmp_path / 'results'), env=python_env(installed))
    assert done.returncode == 0, done.stderr[-3000:]
    (path,) = (tmp_path / 'results' / 'synth').glob('*.json')
    rec = json.loads(path.read_text())
    assert path.name.startswith('specdecoup_meanmax_t3_s0_') and rec['plugins'] == [], path
    named = [(e['dist'], e['value']) for e in rec['entry_points']]
    assert named == [('prism-nb-example', 'prism_nb_example')]
