"""Careless or hostile inputs and crashes never change a number silently: each class of fault found by probing the
product as a new user would (lost models, damaged shared pretraining, wrong or wiped tables, damaged records trusted by
sweeps, late or unchecked parameters, unknown parameters, unconfined paths, errors that name nothing) either works
correctly or fails before any training with an error naming the parameter or the file."""
import copy, errno, json, shutil, subprocess, sys, warnings
from pathlib import Path

import pytest
import torch

from prism_nb.experiment import run
from prism_nb.rescore import evaluate, load_model
from prism_nb.config import make_config, record_path
from prism_nb.records import read_record, read_records, DamagedRecordError, write_record
from prism_nb.checkpoints import checkpoint_file, DamagedCheckpointError
from prism_nb.core import ConfigError
from prism_nb.artefacts import harc_records
from prism_nb.report import check_results_dir, publish
from prism_nb import experiment

QUICK = dict(method='erm', epochs=1, patience=1, max_windows=128)

def papermill(root, notebook, out, *params):
    return subprocess.run([sys.executable, '-m', 'papermill', str(root / 'nbs' / notebook), str(out), '--cwd', str(root / 'nbs'), *params],
                          capture_output=True, text=True)

def output_of(res, out): return res.stdout + res.stderr + (Path(out).read_text() if Path(out).exists() else '')

@pytest.fixture(scope='module')
def trained(train_quick):
    "One quick ERM record (seed 0) in its own results folder."
    return train_quick(QUICK)

# --- models overwritten or lost -----------------------------------------------------------------------------------------

def test_sibling_results_folders_never_share_a_model(tmp_path):
    a = run(QUICK, results_dir=tmp_path / 'runs' / 'a', progress=False)
    b = run(QUICK, results_dir=tmp_path / 'runs' / 'b', progress=False)
    pa, pb = (record_path(make_config(**QUICK), tmp_path / 'runs' / x) for x in 'ab')
    assert checkpoint_file(read_record(pa), pa) != checkpoint_file(read_record(pb), pb)
    assert evaluate(pa)['metrics'] == a['metrics'] and evaluate(pb)['metrics'] == b['metrics']  # both models load

def test_failed_rerun_keeps_the_old_record_and_its_model(trained, monkeypatch):
    results, rec, path = trained
    before = path.read_bytes()
    def disk_full(*a, **k): raise OSError(errno.ENOSPC, 'No space left on device')
    monkeypatch.setattr(experiment, 'atomic_write_json', disk_full)
    with pytest.raises(OSError, match=f'could not write the record {path}'): run(QUICK, results_dir=results, force=True, progress=False)
    monkeypatch.undo()
    assert path.read_bytes() == before and evaluate(path)['metrics'] == rec['metrics']  # the old model is still there and matches
    assert len(list((results / 'checkpoints').rglob('*.pt'))) == 1  # the new checkpoint was removed

def test_disk_full_while_saving_a_checkpoint_names_the_file(tmp_path, monkeypatch):
    def enforce_fail(*a, **k): raise RuntimeError('[enforce fail at inline_container.cc:672] . unexpected pos 64 vs 0')
    monkeypatch.setattr(torch, 'save', enforce_fail)
    with pytest.raises(OSError, match=r'could not write the checkpoint .*checkpoints/harc/erm_cnn_s0_.*free disk space'):
        run(QUICK, results_dir=tmp_path / 'results', progress=False)
    assert not list((tmp_path / 'results').rglob('*.json'))  # no record without its model

# --- damaged shared pretraining -----------------------------------------------------------------------------------------

@pytest.mark.parametrize('damage', ['flip', 'truncate', 'no_digest'])
def test_damaged_shared_pretraining_is_rebuilt(tmp_path, damage):
    cfg = dict(QUICK, method='prism', pretrain_epochs=1)
    first = run(cfg, results_dir=tmp_path / 'r1', checkpoints_dir=tmp_path / 'ck', progress=False)
    shared = next((tmp_path / 'ck' / 'pretrain').glob('*.pt'))
    raw = shared.read_bytes()
    if damage == 'flip': shared.write_bytes(raw[:len(raw) // 2] + bytes(b ^ 0xFF for b in raw[len(raw) // 2:len(raw) // 2 + 64]) + raw[len(raw) // 2 + 64:])
    elif damage == 'truncate': shared.write_bytes(raw[:1000])
    else: shared.with_name(shared.name + '.digest').unlink()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        again = run(cfg, results_dir=tmp_path / 'r2', checkpoints_dir=tmp_path / 'ck', progress=False)
    assert any(shared.name in str(w.message) and 'is damaged' in str(w.message) for w in caught)
    assert again['pretrain_reused'] is None and again['metrics'] == first['metrics']
    third = run(cfg, results_dir=tmp_path / 'r3', checkpoints_dir=tmp_path / 'ck', progress=False)
    assert third['pretrain_reused'] == shared.relative_to(tmp_path / 'ck').as_posix()  # rebuilt, then reused

# --- tables silently wrong or wiped -------------------------------------------------------------------------------------

def _edit(path, fn, where=None):
    rec = json.loads(path.read_text()); fn(rec)
    where = where or path; where.parent.mkdir(parents=True, exist_ok=True); where.write_text(json.dumps(rec))
    return where

RECORD_DAMAGE = [
    ('copied to another seed', lambda r: None, 1, 'it was copied or renamed'),
    ('MMD under an ERM name', lambda r: r['config'].update(method='mmd'), 0, "is not its config's"),
    ('metric true', lambda r: r['metrics'].update(Random=True), 0, 'metrics.Random is bool True, not a number'),
    ('metric 5000', lambda r: r['metrics'].update(Random=5000), 0, 'metrics.Random = 5000 is not a finite number in [0.0, 100.0]'),
    ('metric NaN', lambda r: r['metrics'].update(Random=float('nan')), 0, 'metrics.Random = nan'),
    ('metric null', lambda r: r['metrics'].update(Random=None), 0, 'metrics.Random is NoneType'),
    ('avg a string', lambda r: r.update(avg='88'), 0, 'avg is str'),
    ('lr edited', lambda r: r['config'].update(lr=1e30), 0, 'lr must be in (0, 10]'),
    ('id missing', lambda r: r.pop('id'), 0, 'id is missing'),
    ('checkpoint path absolute', lambda r: r['checkpoint'].update(path='/etc/passwd'), 0, 'must be relative'),
    ('checkpoint path ..', lambda r: r['checkpoint'].update(path='../../x.pt'), 0, "without '..'"),
]

@pytest.mark.parametrize('what,edit,seed,msg', RECORD_DAMAGE, ids=[d[0] for d in RECORD_DAMAGE])
def test_records_that_disagree_with_themselves_are_refused(trained, tmp_path, what, edit, seed, msg):
    results, rec, path = trained
    copy_root = tmp_path / 'results'; shutil.copytree(results, copy_root)
    src = record_path(make_config(**QUICK), copy_root)
    bad = _edit(src, edit, record_path(make_config(**dict(QUICK, seed=seed)), copy_root))
    with pytest.raises(DamagedRecordError, match=str(bad.name)) as e: read_record(bad)
    assert msg in str(e.value)
    with pytest.raises(DamagedRecordError): harc_records({'ERM': {'method': 'erm'}}, seeds=[0, 1], results_dir=copy_root, **{k: v for k, v in QUICK.items() if k != 'method'})

def test_two_records_claiming_one_run_are_refused(trained, tmp_path):
    results, rec, path = trained
    for sub in ('a', 'b'): (tmp_path / sub / 'harc').mkdir(parents=True); shutil.copy(path, tmp_path / sub / 'harc' / path.name)
    with pytest.raises(DamagedRecordError, match='two records claim the same run'): read_records(tmp_path, '*/*/*.json')

def test_repeated_seeds_are_refused(trained):
    results, rec, path = trained
    with pytest.raises(ConfigError, match=r'seeds \[0\] are listed more than once'):
        harc_records({'ERM': {'method': 'erm'}}, seeds=[0, 0, 0, 1], results_dir=results)

@pytest.mark.parametrize('params,msg', [(['-p', 'results_dir', 'reslts'], 'does not exist'),
                                        (['-y', 'seeds: [0, 0, 0, 1]'], 'listed more than once')])
def test_paper_render_refuses_before_any_table(root, tmp_path, params, msg):
    res = papermill(root, 'paper.ipynb', tmp_path / 'out.ipynb', '-p', 'tables_dir', str(tmp_path / 'tables'),
                    '-p', 'figures_dir', str(tmp_path / 'figures'), *params)
    assert res.returncode != 0 and msg in output_of(res, tmp_path / 'out.ipynb')
    assert not (tmp_path / 'tables').exists() and not (tmp_path / 'figures').exists()

def test_render_with_no_records_for_a_committed_table_is_an_error(tmp_path):
    import pandas as pd
    tables, figures = tmp_path / 'tables', tmp_path / 'figures'
    publish({'harc': (pd.DataFrame({'Avg.': ['73.70 ± 0.90']}, index=['ERM']), {})}, {}, tables, figures)
    with pytest.raises(ConfigError, match=r"no values for \['harc'\]"):
        publish({'harc': (pd.DataFrame({'Avg.': ['—']}, index=['ERM']), {}), 'other': (pd.DataFrame({'x': [1.]}), {})}, {}, tables, figures)
    assert '73.70' in (tables / 'harc.md').read_text() and not (tables / 'other.md').exists()
    with pytest.raises(ConfigError, match='does not exist'): check_results_dir(tmp_path / 'reslts')

# --- sweeps trust damaged records ---------------------------------------------------------------------------------------

def test_sweep_does_not_skip_a_damaged_record(trained, tmp_path):
    from concurrent.futures import Future
    from prism_nb.sweep import run_sweep
    results, rec, path = trained
    copy_root = tmp_path / 'results'; shutil.copytree(results, copy_root)
    p = record_path(make_config(**QUICK), copy_root); p.write_text(p.read_text()[:200])
    class NothingRuns:
        def submit(self, fn, *a): raise AssertionError('nothing should be submitted')
    s = run_sweep([make_config(**QUICK)], executor=NothingRuns(), results_dir=copy_root, out_dir=tmp_path / 'runs', threads=1, progress=False)
    assert s['skipped'] == [] and s['failed'][0][0] == p.stem and 'damaged record' in s['failed'][0][1]

# --- late or unchecked hyperparameters and settings: all refused before any data is read ---------------------------------

LATE = [
    (dict(hparams={'lr': 1e30}), "'lr' is set by the run's own `lr` parameter"),
    (dict(hparams={'weight_decay': float('nan')}), "'weight_decay' of ERM must be in [0.0, 1.0]"),
    (dict(hparams={'weight_decay': -1e6}), "'weight_decay' of ERM must be in [0.0, 1.0]"),
    (dict(method='vrex', hparams={'domains_per_batch': 0}), "'domains_per_batch' of VREx must be in [1, 4096]"),
    (dict(method='prism', hparams={'K': 0}), "'K' of PRISM must be in [1, 64]"),
    (dict(method='prism', hparams={'r_t': 1.5}), "'r_t' of PRISM must be in [0.0, 0.99]"),
    (dict(method='prism', hparams={'aggregate': 'bogus'}), "'aggregate' of PRISM must be one of ['max', 'mean']"),
    (dict(pretrain_epochs=5), 'ERM has no label-free pretraining'),
    (dict(train_condition='Nope'), "unknown train_condition 'Nope'"),
]

@pytest.mark.parametrize('cfg,msg', LATE)
def test_bad_hparams_fail_before_data(tmp_path, monkeypatch, cfg, msg):
    monkeypatch.setenv('PRISM_DATA', str(tmp_path / 'no_data_here'))  # any data access would fail differently
    with pytest.raises(ConfigError) as e: run(dict(QUICK, **cfg), results_dir=tmp_path / 'results', progress=False)
    assert msg in str(e.value)
    assert not (tmp_path / 'results' / 'harc').exists() or not list((tmp_path / 'results').rglob('*.json'))

@pytest.mark.parametrize('kw,msg', [(dict(device='mps'), 'MPS backend is not available'), (dict(threads=10_000), 'threads must be in [1,'),
                                    (dict(results_dir=''), 'results_dir is empty')])
def test_bad_settings_fail_before_data(tmp_path, monkeypatch, kw, msg):
    if kw.get('device') == 'mps' and torch.backends.mps.is_available(): pytest.skip('this machine has MPS')
    monkeypatch.setenv('PRISM_DATA', str(tmp_path / 'no_data_here'))
    with pytest.raises(ConfigError, match=msg.replace('[', r'\[')): run(QUICK, **{'results_dir': tmp_path / 'results', 'progress': False, **kw})

# --- unknown parameters of the run notebooks ---------------------------------------------------------------------------

@pytest.mark.parametrize('notebook,params,msg', [
    ('run_harc.ipynb', ['-p', 'epochz', '5'], "unknown parameter(s) ['epochz']"),
    ('run_realworld.ipynb', ['-p', 'rate', '0.5'], "unknown parameter(s) ['rate']"),
    ('run_harc.ipynb', ['-p', 'threads', '10000'], 'threads must be in [1,'),
    ('run_harc.ipynb', ['-p', 'results_dir', ''], 'results_dir is empty'),
])
def test_run_notebooks_refuse_what_they_do_not_define(root, tmp_path, notebook, params, msg):
    before = set(root.iterdir())
    res = papermill(root, notebook, tmp_path / 'out.ipynb', *params)
    out = output_of(res, tmp_path / 'out.ipynb')
    assert res.returncode != 0 and msg in out and 'ConfigError' in out, out[-1500:]
    assert not {p.name for p in set(root.iterdir()) - before} & {'harc', 'realworld', 'checkpoints'}  # no record written into the repository

# --- errors that name the file ------------------------------------------------------------------------------------------

def test_unreadable_checkpoint_names_the_file(tmp_path):
    bad = tmp_path / 'model.pt'; bad.write_bytes(b'\x80\x04not a checkpoint')
    with pytest.raises(DamagedCheckpointError, match=str(bad)): load_model(bad)
    bad.write_bytes(b'')
    with pytest.raises(DamagedCheckpointError, match=str(bad)): load_model(bad)

def test_malformed_record_names_the_file_and_field(tmp_path):
    p = tmp_path / 'harc' / 'x.json'; p.parent.mkdir(); p.write_text(json.dumps(dict(config=make_config(), metrics={}, timing={})))
    with pytest.raises(DamagedRecordError, match=f'{p}.*id is missing'): read_record(p)
    p.write_text('{"config": ')
    with pytest.raises(DamagedRecordError, match=str(p)): read_record(p)

def test_committed_records_all_keep_the_contract(root):
    folders = [d for d in sorted((root / 'results').iterdir()) if d.is_dir()]
    files = [p for p in (root / 'results').rglob('*.json') if 'checkpoints' not in p.parts]
    assert sum(len(read_records(d, '**/*.json', retrained=True)) for d in folders) == len(files)
    # only the knob study scores retrained models (18_paper_severity says so); every other evaluation its run's model
    strict = {d.name: len(read_records(d, '**/*.json')) for d in folders}
    assert {d.name for d in folders if strict[d.name] != len(list(d.rglob('*.json')))} <= {'harc_knobs'}
