"""No silent wrong result (issue 43): a run that learned nothing or got poisoned input says so before
anything is recorded. A tiny task of our own ('joints': 48 training windows of 16 steps, two
channels, two classes) is poisoned on demand by its config; tiny methods and backbones break the
training loop, collapse, or break the backbone contract. Each run is one epoch on the CPU."""
import math, os, shutil, warnings
from pathlib import Path

import pytest
import torch

from prism_nb import experiment
from prism_nb.algorithms import ERM, register_algorithm
from prism_nb.backbones import BACKBONES
from prism_nb.config import Task, TaskData, TASKS, make_config, record_path, check_int
from prism_nb.core import ISMTS, ConfigError
from prism_nb.engine import percent_correct, predict
from prism_nb.experiment import run
from prism_nb.records import read_record
from prism_nb.rescore import evaluate
from prism_nb.sweep import run_sweep
from conftest import RecordingExecutor

L, D, C = 16, 2, 2
POISONS = ('', 'nan_padding', 'nan_observed', 'half_mask', 'label', 'empty_window', 'short_times')
LOAD_HOOKS = []  # called by the loader, after the runner read the old record and before training


def windows(n: int, domains: int, seed: int) -> ISMTS:
    "`n` windows of two sines (one per class), 70% of the cells observed, `domains` domains."
    g = torch.Generator().manual_seed(seed)
    y = torch.arange(n) % C
    t = torch.linspace(0, 1, L).expand(n, L).contiguous()
    v = torch.sin(2 * math.pi * (y + 1)[:, None, None] * t[..., None]) + 0.1 * torch.randn(n, L, D, generator=g)
    m = (torch.rand(n, L, D, generator=g) < 0.7).float()
    m[:, 0] = 1
    return ISMTS(v * m, m, t, y, torch.arange(n) % domains)


def poison(x: ISMTS, how: str) -> ISMTS:
    "`x` with one kind of bad input."
    v, m, t, y, d = x.v.clone(), x.m.clone(), x.t.clone(), x.y.clone(), x.d
    if how == 'nan_padding':  # an unobserved cell holding NaN: v * m keeps it
        m[3, 5, 1], v[3, 5, 1] = 0, math.nan
    elif how == 'nan_observed':
        m[3, 5, 1], v[3, 5, 1] = 1, math.inf
    elif how == 'half_mask':
        m[2, 4, 0] = 0.5
    elif how == 'label':
        y[7] = C
    elif how == 'empty_window':
        m[4], v[4] = 0, 0
    elif how == 'short_times':
        t = t[:, :-1]
    return ISMTS(v, m, t, y, d)


def check_joints(cfg: dict):
    "The task's own keys."
    if cfg['poison'] not in POISONS:
        raise ConfigError(f"poison must be one of {POISONS}")
    if cfg['where'] not in ('train', 'val', 'Random'):
        raise ConfigError("where must be train, val or Random")
    cfg['domains'] = check_int('domains', cfg['domains'], 1, 4)


def load_joints(cfg: dict) -> TaskData:
    "Training and validation windows of `domains` domains, one test set, one split poisoned."
    for hook in LOAD_HOOKS:
        hook()
    splits = dict(train=windows(48, cfg['domains'], 0), val=windows(16, cfg['domains'], 1),
                  Random=windows(16, 1, 2))
    splits[cfg['where']] = poison(splits[cfg['where']], cfg['poison'])
    return TaskData(splits['train'], splits['val'], {'Random': splits['Random']},
                    info=dict(n_classes=C, n_domains=cfg['domains'], n_features=D, seq_len=L))


def evaluate_joints(algo, data: TaskData, cfg: dict) -> dict:
    "Accuracy (%) on the test set."
    return dict(metrics={c: percent_correct(predict(algo, x).cpu(), x.y) for c, x in data.tests.items()})


JOINTS = Task(
    name='joints', display='Joints', defaults=dict(poison='', where='train', domains=2),
    check=check_joints, load=load_joints, evaluate=evaluate_joints,
    record_stem=lambda cfg: ((), f"{cfg['method']}_{cfg['backbone']}_{cfg['poison'] or 'clean'}_s{cfg['seed']}"),
    conditions=('Random',), test_windows=lambda cfg: windows(16, 1, 2))


@register_algorithm('JointsNaN', replace=True)
class JointsNaN(ERM):
    "ERM whose reported loss is NaN from its second step on."
    group, needs_domains = 'reference', False

    def update(self, batch):
        out = super().update(batch)
        self.steps = getattr(self, 'steps', 0) + 1
        return {**out, 'loss': out['loss'] * math.nan} if self.steps > 1 else out


@register_algorithm('JointsSpoiled', replace=True)
class JointsSpoiled(ERM):
    "ERM whose last update of the epoch (its third) leaves an infinite weight, its loss finite."
    group, needs_domains = 'reference', False

    def update(self, batch):
        out = super().update(batch)
        self.steps = getattr(self, 'steps', 0) + 1
        if self.steps == 3:
            with torch.no_grad():
                next(self.classifier.parameters()).view(-1)[0] = math.inf
        return out


@register_algorithm('JointsConst', replace=True)
class JointsConst(ERM):
    "ERM whose predictions are class 1 for every window, whatever it learned."
    group, needs_domains = 'reference', False

    def predict(self, v, m, t):
        return super().predict(v, m, t) * 0 + torch.tensor([0.0, 1.0], device=v.device)


class Detached(torch.nn.Module):
    "A backbone whose features are cut off from its weights."
    def __init__(self, n_features, seq_len):
        super().__init__()
        self.lin, self.out_dim = torch.nn.Linear(n_features, 8), 8

    def forward(self, v, m, t):
        return self.lin(v.sum(1)).detach()


class Wide(Detached):
    "A backbone returning more features than its out_dim says."
    def forward(self, v, m, t):
        return torch.cat([self.lin(v.sum(1))] * 2, 1)


QUICK = dict(dataset='joints', epochs=1, patience=1, batch_size=16)


@pytest.fixture(autouse=True)
def joints_task():
    "The task registered for the test, with one torch thread."
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    with TASKS.temporary('joints', JOINTS):
        yield
    LOAD_HOOKS.clear()
    torch.set_num_threads(threads)


def nothing_written(results: Path, cfg: dict):
    "No record of `cfg` and no model under `results`."
    assert not record_path(make_config(**cfg), results).exists()
    assert not [p for p in Path(results).rglob('*.pt')], list(Path(results).rglob('*'))


def raised(fn, name: str, *parts) -> str:
    "The message of the `name` error `fn` raises, checked to hold every part."
    with pytest.raises(Exception) as e:
        fn()
    assert type(e.value).__name__ == name, (type(e.value).__name__, str(e.value))
    for p in parts:
        assert p in str(e.value), (p, str(e.value))
    return str(e.value)


# --- 1. finite or stop ---------------------------------------------------------------------------

@pytest.mark.parametrize('method,what', [('jointsnan', "loss 'loss' is nan at epoch 1 of at most 1, batch 2 of 3"),
                                         ('jointsspoiled', "weights ['classifier.weight'] hold NaN or inf (a non-finite gradient reached them) at epoch 1")])
def test_a_non_finite_loss_or_weight_stops_the_run_and_records_nothing(tmp_path, method, what):
    cfg = dict(QUICK, method=method)
    display = {'jointsnan': 'JointsNaN', 'jointsspoiled': 'JointsSpoiled'}[method]
    raised(lambda: run(cfg, results_dir=tmp_path, progress=False), 'NonFiniteError',
           f'{display} fit (method {display}, backbone cnn)', what, 'nothing recorded')
    nothing_written(tmp_path, cfg)


def test_prism_pretraining_stops_at_a_non_finite_loss(tmp_path, monkeypatch):
    from prism_nb.prism import PRISM
    losses = PRISM.pretrain_losses
    monkeypatch.setattr(PRISM, 'pretrain_losses', lambda self, x: {k: v * math.nan for k, v in losses(self, x).items()})
    cfg = dict(QUICK, method='prism', pretrain_epochs=1)
    raised(lambda: run(cfg, results_dir=tmp_path, progress=False), 'NonFiniteError',
           'PRISM pretrain (method PRISM, backbone cnn)', 'at epoch 1 of at most 1, batch 1 of 3')
    nothing_written(tmp_path, cfg)


# --- 2. collapse flag ----------------------------------------------------------------------------

def test_a_collapsed_run_is_flagged_in_its_record(tmp_path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        rec = run(dict(QUICK, method='jointsconst'), results_dir=tmp_path, progress=False)
    assert (rec['collapsed'], rec['collapsed_class']) == (True, 1)
    assert any('predicts class 1 for every source-validation window' in str(w.message) for w in caught)
    again = read_record(record_path(make_config(**dict(QUICK, method='jointsconst')), tmp_path))
    assert (again['collapsed'], again['collapsed_class']) == (True, 1)  # kept by the record contract
    clean = run(dict(QUICK, method='erm', epochs=3), results_dir=tmp_path, progress=False)
    assert (clean['collapsed'], clean['collapsed_class']) == (False, None)


# --- 3. checked at the joint, before any work ----------------------------------------------------

BAD_WINDOWS = [
    ('nan_padding', 'train', 'source training windows (train): values (v) hold 1 NaN or inf cells, 1 of them where the mask is 0'),
    ('nan_observed', 'val', 'source validation windows (val): values (v) hold 1 NaN or inf cells, 0 of them'),
    ('half_mask', 'train', 'source training windows (train): mask must be binary'),
    ('label', 'Random', "test set 'Random': labels (y) must lie in [0, 2), got 0..2"),
    ('empty_window', 'val', 'source validation windows (val): mask (m) observes nothing in 1 window(s), the first at index 4'),
    ('short_times', 'train', 'source training windows (train): times must be [B,L]'),
]


@pytest.mark.parametrize('how,where,msg', BAD_WINDOWS)
def test_poisoned_windows_are_refused_before_training(tmp_path, monkeypatch, how, where, msg):
    def no_training(*a, **k):
        raise AssertionError('trained on poisoned windows')
    monkeypatch.setattr(experiment, 'train_algorithm', no_training)
    cfg = dict(QUICK, poison=how, where=where)
    raised(lambda: run(cfg, results_dir=tmp_path, progress=False), 'BadTaskData', f'task joints: {msg}')
    nothing_written(tmp_path, cfg)


@pytest.mark.parametrize('backbone,msg', [('detached', "no gradient reaches parameter(s) ['lin.weight', 'lin.bias']"),
                                          ('wide', 'returned (4, 16) for 4 windows, not (4, 8)')])
def test_a_backbone_breaking_its_contract_is_named_before_training(tmp_path, backbone, msg):
    factory = dict(detached=Detached, wide=Wide)[backbone]
    with BACKBONES.temporary(backbone, factory):
        cfg = dict(QUICK, backbone=backbone)
        raised(lambda: run(cfg, results_dir=tmp_path, progress=False), 'BackboneError',
               f"backbone '{backbone}' (built for D=2, L=16)", msg)
        nothing_written(tmp_path, cfg)


def test_a_method_needing_domains_refuses_a_one_domain_task(tmp_path, monkeypatch):
    monkeypatch.setattr(experiment, 'train_algorithm', lambda *a, **k: pytest.fail('trained'))
    cfg = dict(QUICK, method='coral', domains=1)
    raised(lambda: run(cfg, results_dir=tmp_path, progress=False), 'ConfigError',
           'CORAL learns from source-domain labels but task joints gives 1 training domain')
    nothing_written(tmp_path, cfg)


def test_evaluate_refuses_masks_not_0_1_or_misshapen(tmp_path):
    rec = run(dict(QUICK, method='erm'), results_dir=tmp_path, progress=False)
    full = evaluate(rec, masks=torch.ones(16, L, D))['metrics']['custom']
    assert 0 <= full <= 100
    for masks, msg in [(torch.full((16, L, D), 0.5), 'masks must hold only 0 and 1'),
                       (torch.ones(16, L, D).index_put_((torch.tensor([0]),), torch.tensor(math.nan)),
                        'masks must hold only 0 and 1'),
                       (torch.ones(16, L, D + 1), f'masks must be (16, {L}, {D})')]:
        raised(lambda: evaluate(rec, masks=masks), 'ValueError', msg)


# --- 4. sweeps agree with runs -------------------------------------------------------------------

def test_a_sweep_gives_each_run_one_thread_by_default(tmp_path):
    ex = RecordingExecutor()
    run_sweep([make_config(**dict(QUICK, method='erm'))], workers=1, executor=ex, results_dir=tmp_path,
              out_dir=tmp_path / 'runs', progress=False)
    assert ex.cmds[0].startswith('OMP_NUM_THREADS=1 ') and ' -p threads 1' in ex.cmds[0], ex.cmds[0]
    assert run(dict(QUICK, method='erm'), results_dir=tmp_path, progress=False)['torch_threads'] == 1


# --- 5. a force rerun never follows a swapped checkpoints folder ---------------------------------

def test_a_checkpoints_folder_swapped_for_a_link_during_a_rerun_is_not_followed(tmp_path):
    results = tmp_path / 'results'
    cfg = dict(QUICK, method='erm')
    first = run(cfg, results_dir=results, progress=False)
    old = results / 'checkpoints' / first['checkpoint']['path']
    decoy = tmp_path / 'elsewhere'  # the same bytes under the same name, outside the results
    (decoy / old.parent.name).mkdir(parents=True)
    shutil.copy(old, decoy / old.parent.name / old.name)

    def swap():  # after the runner read the old record, before it trains
        os.rename(results / 'checkpoints', results / 'checkpoints_real')
        os.symlink(decoy, results / 'checkpoints')
    LOAD_HOOKS.append(swap)
    again = run(cfg, results_dir=results, force=True, progress=False)
    assert again['run_uid'] != first['run_uid']
    assert (decoy / old.parent.name / old.name).exists()  # the file the link leads to is kept
    assert not (results / 'checkpoints_real' / old.parent.name / old.name).exists()  # the old model is gone


# --- 6. a task's own hooks, probed before training ------------------------------------------------

def test_a_task_scoring_outside_its_range_stops_before_training(tmp_path):
    import dataclasses
    calls = []

    def scores_150(algo, data, cfg):
        calls.append(len(next(iter(data.tests.values()))))
        return dict(metrics={'Random': 150.0})

    with TASKS.temporary('joints', dataclasses.replace(JOINTS, evaluate=scores_150), replace=True):
        cfg = dict(QUICK, method='erm')
        raised(lambda: run(cfg, results_dir=tmp_path, progress=False), 'TaskHookError',
               'task joints: its evaluate(algo, data, cfg) hook', "outside [0.0, 100.0]")
    assert calls == [16]  # the probe only: no training, no second evaluation
    assert not list(Path(tmp_path).rglob('*.json')) and not list(Path(tmp_path).rglob('*.pt'))


def test_a_task_naming_a_path_out_of_its_folder_is_refused_before_any_work(tmp_path):
    import dataclasses
    loads = []
    LOAD_HOOKS.append(lambda: loads.append(1))
    with TASKS.temporary('joints', dataclasses.replace(JOINTS, record_stem=lambda cfg: ((), '../x')), replace=True):
        raised(lambda: run(dict(QUICK, method='erm'), results_dir=tmp_path, progress=False), 'ConfigError',
               'task joints record_stem part')
    assert loads == [] and not list(Path(tmp_path).rglob('*.json'))


def test_a_checkpoints_folder_linked_to_another_disk_is_the_users_to_make(tmp_path):
    from prism_nb.rescore import load_model
    (tmp_path / 'results').mkdir()
    (tmp_path / 'other_disk').mkdir()
    (tmp_path / 'results' / 'checkpoints').symlink_to(tmp_path / 'other_disk')
    cfg = dict(QUICK, method='erm')
    rec = run(cfg, results_dir=tmp_path / 'results', progress=False)
    again = read_record(record_path(make_config(**cfg), tmp_path / 'results'))  # its own record loads
    model, _ = load_model(again)
    assert again['run_uid'] == rec['run_uid'] and list((tmp_path / 'other_disk').rglob('*.pt'))
    run(cfg, results_dir=tmp_path / 'results', progress=False, force=True)
    assert len(list((tmp_path / 'other_disk').rglob('*.pt'))) == 1  # the replaced model removed there


def test_plugins_record_says_what_it_imports_and_refuses_relative_paths(tmp_path, capsys):
    from prism_nb.core import PluginError
    from prism_nb.rescore import record_plugins
    with pytest.raises(PluginError, match=r"relative path; plugins='record' imports only"):
        record_plugins(['my_method.py'], 'record', 'record x.json')
    (tmp_path / 'announced_plugin.py').write_text('VALUE = 1\n')
    record_plugins([str(tmp_path / 'announced_plugin.py')], 'record', 'record y.json')
    assert f"importing ['{tmp_path / 'announced_plugin.py'}'], as record y.json names them" in capsys.readouterr().err


def test_reading_a_record_imports_no_plugin_and_names_a_missing_distribution(tmp_path, monkeypatch):
    import json
    import sys
    import prism_nb
    from prism_nb.core import PluginError
    cfg = dict(QUICK, method='erm')
    rec = run(cfg, results_dir=tmp_path, progress=False)
    path = record_path(make_config(**cfg), tmp_path)
    data = json.loads(path.read_text())
    data['config']['method'] = 'gonemethod'
    data['entry_points'] = [dict(name='gone', value='gone_pkg', dist='gone-pkg', version='1.2.3')]
    path.write_text(json.dumps(data))
    calls = []
    for mod in [m for n, m in list(sys.modules.items()) if n.startswith('prism_nb.')]:
        if hasattr(mod, 'load_plugins'):  # wherever a lookup could reach it from
            monkeypatch.setattr(mod, 'load_plugins', lambda *a, **k: calls.append(a) or [])
    with pytest.raises(PluginError, match=r"pip install gone-pkg==1\.2\.3") as e:
        read_record(path)
    assert 'not damaged' in str(e.value) and calls == []  # no installed plugin package imported
    assert rec['config']['method'] == 'erm'
