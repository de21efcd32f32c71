"""Bad parameters and damaged files fail at once, with an error naming the parameter or the file, before any
training, and leave no record or table lost or changed (each case reproduced through papermill)."""
import ast, json, os, subprocess, sys, time
from pathlib import Path
import pytest

def papermill(root, out, results, notebook='run_harc.ipynb', **params):
    cmd = [sys.executable, '-m', 'papermill', str(root / 'nbs' / notebook), str(out), '--cwd', str(root / 'nbs'),
           '-p', 'results_dir', str(results)]
    for k, v in params.items(): cmd += ['-p', k, str(v)]
    return cmd

def files_under(folder): return sorted(p for p in Path(folder).rglob('*') if p.is_file()) if Path(folder).exists() else []

BAD = [
    (dict(seed='abc'), "seed must be an integer, got str 'abc'"),
    (dict(seed='/../../x'), 'seed must be an integer'),
    (dict(experiment='../x'), 'experiment must be a plain name'),
    (dict(experiment='../../x'), 'experiment must be a plain name'),
    (dict(method='prism', epochs=0), 'epochs must be in [1'),
    (dict(hparams='{"weight_decay": "0.1"}'), "'weight_decay' of ERM must be float"),
    (dict(hparams='{weight_decay: 0.1'), 'hparams: not valid JSON'),
    (dict(variant='nope'), 'only PRISM has ablation variants'),
    (dict(max_windows=-5), 'max_windows must be in [6'),
    (dict(device='gpu0'), 'device must be'),
    (dict(threads=0), 'threads must be in [1'),
    (dict(force='maybe'), 'force must be True or False'),
]

@pytest.fixture(scope='module')
def bad_runs(tmp_path_factory):
    "Every BAD case through papermill, two kernels at a time (each in its own folder): case index -> (folder, result)."
    from concurrent.futures import ThreadPoolExecutor
    from conftest import ROOT
    base = tmp_path_factory.mktemp('bad')

    def one(k):
        d = base / f'case{k}' / 'run'  # experiment='../../x' would land in base / f'case{k}' / 'x'
        d.mkdir(parents=True)
        cmd = papermill(ROOT, d / 'x.ipynb', d / 'results', **BAD[k][0])
        return d, subprocess.run(cmd, capture_output=True, text=True)

    with ThreadPoolExecutor(2) as pool:  # kernels wait on start-up as much as they compute
        return dict(enumerate(pool.map(one, range(len(BAD)))))

@pytest.mark.parametrize('case', range(len(BAD)), ids=[m for _, m in BAD])
def test_bad_parameter_fails_before_any_work(bad_runs, case):
    d, res = bad_runs[case]
    assert res.returncode != 0
    out = res.stdout + res.stderr + (d / 'x.ipynb').read_text()
    assert BAD[case][1] in out, out[-2000:]
    assert 'ConfigError' in out  # raised by the checks, not by training
    assert not any(files_under(f) for f in (d / 'results', d / 'checkpoints', d / 'x', d.parent / 'x'))

def test_json_hparams_are_parsed(tmp_path):
    from prism_nb.config import make_config
    assert make_config(hparams='{"weight_decay": 0.1}')['hparams'] == {'weight_decay': 0.1}

def test_unwritable_results_folder_fails_before_training(root, tmp_path):
    (tmp_path / 'a_file').write_text('not a folder')
    res = subprocess.run(papermill(root, tmp_path / 'x.ipynb', tmp_path / 'a_file' / 'results', max_windows=256, epochs=2),
                         capture_output=True, text=True)
    out = res.stdout + res.stderr + (tmp_path / 'x.ipynb').read_text()
    assert res.returncode != 0 and 'results folder' in out and 'is not writable' in out
    assert 'fit epoch' not in out  # no epoch was trained

@pytest.mark.skipif(os.geteuid() == 0, reason='root can write into a read-only folder')
def test_read_only_results_folder_fails_before_training(root, tmp_path):
    ro = tmp_path / 'ro'; ro.mkdir(); ro.chmod(0o555)
    res = subprocess.run(papermill(root, tmp_path / 'x.ipynb', ro, max_windows=256, epochs=2), capture_output=True, text=True)
    assert res.returncode != 0 and 'is not writable' in res.stdout + res.stderr + (tmp_path / 'x.ipynb').read_text()

def test_truncated_record_is_named_and_recoverable(tmp_path):
    from prism_nb.experiment import run
    from prism_nb.config import make_config, record_path
    from prism_nb.records import DamagedRecordError
    quick = dict(method='erm', epochs=1, patience=1, max_windows=128)
    rec = run(quick, results_dir=tmp_path / 'r', progress=False)
    path = record_path(make_config(**quick), tmp_path / 'r')
    path.write_text(path.read_text()[:200])
    with pytest.raises(DamagedRecordError, match='force=True') as e: run(quick, results_dir=tmp_path / 'r', progress=False)
    assert str(path) in str(e.value)
    from prism_nb.artefacts import harc_result_table
    with pytest.raises(DamagedRecordError, match=str(path)): harc_result_table({'ERM': {'method': 'erm'}}, seeds=[0], results_dir=tmp_path / 'r',
                                                                              paper_table=None, epochs=1, patience=1, max_windows=128)
    again = run(quick, results_dir=tmp_path / 'r', force=True, progress=False)
    assert again['metrics'] == rec['metrics']

def test_prism_registered_in_a_fresh_interpreter():
    code = "from prism_nb.algorithms import algorithm_class; print(algorithm_class('prism').__name__)"
    assert subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True).stdout.strip() == 'PRISM'

def test_no_import_cycles(root):
    "No module of prism_nb imports (at top level or inside a function) a module that imports it back, directly or not."
    pkg = root / 'prism_nb'
    mods = {p.stem for p in pkg.glob('*.py') if p.stem not in ('__init__', '_modidx')}
    graph = {}
    for m in mods:
        deps = set()
        for node in ast.walk(ast.parse((pkg / f'{m}.py').read_text())):
            if isinstance(node, ast.ImportFrom):
                name = ('prism_nb.' if node.level else '') + (node.module or '')
                if node.level and not node.module: deps |= {a.name for a in node.names}
                elif name.startswith('prism_nb.'): deps.add(name.split('.')[1])
                elif name == 'prism_nb': deps |= {a.name for a in node.names}
            elif isinstance(node, ast.Import):
                deps |= {a.name.split('.')[1] for a in node.names if a.name.startswith('prism_nb.')}
        graph[m] = deps & mods - {m}
    def reach(m, seen):
        for d in graph[m]:
            if d not in seen: seen.add(d); reach(d, seen)
        return seen
    cycles = [m for m in mods if m in reach(m, set())]
    assert not cycles, {m: graph[m] for m in cycles}
