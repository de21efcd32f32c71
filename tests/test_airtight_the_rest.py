"""Issue 61, part B: the hang in the registration probe, journals and locks of a render, ledger forgeries that agree
with themselves, evaluation records outside the contract, and faults found late. Each case is refused before any
work, naming the condition, file, folder or parameter; nothing hangs and no file moves from outside a render."""
import threading

import pytest
import torch

from prism_nb.core import ConfigError
from prism_nb.sampling import CONDITIONS, register_condition, register_signal_condition
import prism_nb.sampling as sampling


def raised(fn, kind, *parts) -> str:
    "The message of the error `fn` raises, checked to be a `kind` holding every part."
    with pytest.raises(Exception) as e:
        fn()
    assert isinstance(e.value, kind), (type(e.value).__name__, str(e.value))
    for p in parts:
        assert p in str(e.value), (p, str(e.value))
    return str(e.value)


# --- 1. registering a condition -----------------------------------------------------------------

@pytest.mark.parametrize('sees', [True, False])
def test_a_condition_that_never_returns_is_refused_at_registration_naming_it(monkeypatch, sees):
    monkeypatch.setattr(sampling, 'PROBE_LIMIT_S', 0.2, raising=False)
    release = threading.Event()

    def hangs(*args):
        release.wait()  # never returns until the test lets it go
        raise RuntimeError('released')

    name = f'Hangs{sees}'
    register = register_signal_condition if sees else register_condition
    try:
        raised(lambda: register(name)(hangs), ConfigError, repr(name), 'did not return')
    finally:
        release.set()
    assert name not in CONDITIONS


def test_the_probe_under_its_limit_keeps_the_global_generator():
    state = torch.get_rng_state()

    def draws_from_g(v, m, steps, g):
        torch.rand(3)  # a draw from torch's global generator the probe puts back, wherever it runs
        out = torch.zeros_like(m)
        out[:, :steps] = 1.0
        return out

    register_signal_condition('QuickOne')(draws_from_g)  # the same masks twice: accepted
    assert torch.equal(torch.get_rng_state(), state)


@pytest.mark.parametrize('fn', [len, print, torch.ones_like, lambda v, m: m])
def test_a_function_that_cannot_take_the_conditions_arguments_is_refused_at_registration(fn):
    raised(lambda: register_signal_condition('Builtin')(fn), ConfigError, "'Builtin'", '(v, m, steps, g)')
    raised(lambda: register_condition('BuiltinPlain')(fn), ConfigError, "'BuiltinPlain'", '(n, L, D, steps, g)')
    assert 'Builtin' not in CONDITIONS and 'BuiltinPlain' not in CONDITIONS


# --- 2. a render's journals, locks and killed moves ----------------------------------------------

import json
from pathlib import Path

import pandas as pd
from filelock import FileLock

from prism_nb.artefacts import render_folders
from prism_nb import report
from prism_nb.report import check_render_finished, finish_publish, publish, read_table


def render_set(tag: str) -> tuple:
    "A table and a figure, both showing `tag`."
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(1, 1))
    ax.set_title(tag)
    return {'harc': (pd.DataFrame({'Avg.': [f'{tag} ± 0.1']}, index=['ERM']), {})}, {'f': fig}


def planted_journal(out: Path, uid: str, figures_dir) -> Path:
    "A `.tables.commit-<uid>` folder beside `out/tables` whose journal names `figures_dir`."
    commit = out / f'.tables.commit-{uid}'
    commit.mkdir(parents=True)
    (commit / '.journal.json').write_text(json.dumps({'figures_dir': str(figures_dir)}))
    return commit / '.journal.json'


def test_a_journal_naming_a_folder_outside_the_render_moves_nothing_and_is_named(tmp_path):
    victim = tmp_path / 'victim'
    victim.mkdir()
    (victim / 'keep.txt').write_text('mine')
    planted = tmp_path / '.victim.staging-abcd1234'
    planted.mkdir()
    (planted / 'keep.txt').write_text('planted')
    out = tmp_path / 'out'
    journal = planted_journal(out, 'abcd1234', victim)
    raised(lambda: render_folders(out / 'tables', out / 'figures'), ConfigError, str(journal), str(victim))
    assert (victim / 'keep.txt').read_text() == 'mine' and (planted / 'keep.txt').read_text() == 'planted'


@pytest.mark.parametrize('text', ['{"figures_dir": 7}', '[1, 2]', '{not json', '{}'])
def test_a_damaged_journal_is_refused_naming_it(tmp_path, text):
    out = tmp_path / 'out'
    journal = planted_journal(out, 'abcd1234', out / 'figures')
    journal.write_text(text)
    raised(lambda: finish_publish(out / 'tables', out / 'figures'), ConfigError, str(journal))


def test_a_staging_folder_that_is_a_link_out_of_the_render_moves_nothing(tmp_path):
    elsewhere = tmp_path / 'elsewhere'
    elsewhere.mkdir()
    (elsewhere / 'secret.txt').write_text('not the render')
    out = tmp_path / 'out'
    planted_journal(out, 'abcd1234', out / 'figures')
    (out / '.figures.staging-abcd1234').symlink_to(elsewhere)
    raised(lambda: finish_publish(out / 'tables', out / 'figures'), ConfigError, '.figures.staging-abcd1234', 'link')
    assert (elsewhere / 'secret.txt').read_text() == 'not the render'


def test_a_render_into_a_figures_folder_another_render_holds_is_refused(tmp_path):
    t, f = render_set('1.00')
    figures = tmp_path / 'shared' / 'figures'
    figures.parent.mkdir()
    with FileLock(str(figures.parent / '.render.lock')):  # a render with its tables elsewhere is writing here
        raised(lambda: publish(t, f, tmp_path / 'mine' / 'tables', figures), RuntimeError, 'another render holds')
    assert not figures.exists() and not (tmp_path / 'mine' / 'tables').exists()


def test_a_render_killed_between_figures_and_tables_is_reported_by_the_next_reader(tmp_path, monkeypatch):
    tables, figures = tmp_path / 'out' / 'tables', tmp_path / 'out' / 'figures'
    (old_t, old_f), (new_t, new_f) = render_set('11.00'), render_set('22.00')
    publish(old_t, old_f, tables, figures)
    assert read_table('harc', tables, figures).loc['ERM', 'Avg.'] == '11.00 ± 0.1'
    real = report._move_in

    def killed(src, live):
        if Path(live) == tables:
            raise KeyboardInterrupt('killed between moving in figures and tables')
        return real(src, live)

    monkeypatch.setattr(report, '_move_in', killed)
    with pytest.raises(KeyboardInterrupt):
        publish(new_t, new_f, tables, figures)
    monkeypatch.setattr(report, '_move_in', real)
    msg = raised(lambda: read_table('harc', tables, figures), ConfigError, str(tables), str(figures), 'render_folders(')
    assert '.tables.commit-' in msg
    raised(lambda: check_render_finished(tables, figures), ConfigError, 'killed')
    render_folders(tables, figures)  # what the message says to run
    check_render_finished(tables, figures)
    assert read_table('harc', tables, figures).loc['ERM', 'Avg.'] == '22.00 ± 0.1'


# --- 3. ledger forgeries that agree with themselves ------------------------------------------------

import shutil

from prism_nb.ledger import MAX_RUN_THREADS, compute_ledger, cpu_seconds, records_cpu_hours
from prism_nb.records import DamagedRecordError, read_record, read_records

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / 'results'
TUNED = 'harc_tuned/arm_cnn_h1_s0_d1fad8c3318b.json'  # cpu facts, per_class, split_metrics
OLD = 'harc/erm_mtand_s0_0454051258fa.json'  # eight conditions, no cpu facts
EIGHT = 'harc/erm_cnn_s1_d17f15181557.json'  # eight conditions, some far from 0 and 100


def edited(tmp_path, rel: str, edit) -> Path:
    "The committed record `rel` copied into tmp_path/results, after `edit(record)` in place."
    dst = tmp_path / 'results' / rel
    dst.parent.mkdir(parents=True, exist_ok=True)
    rec = json.loads((RESULTS / rel).read_text())
    edit(rec)
    dst.write_text(json.dumps(rec))
    return dst


def cost_refused(path: Path, *words):
    "Every reader of timings refuses `path` with DamagedRecordError, naming it and `words`."
    results = path.parents[1]
    for read in (lambda: cpu_seconds(read_record(path)), lambda: records_cpu_hours(results),
                 lambda: compute_ledger(results)):
        raised(read, DamagedRecordError, str(path), *words)


def forge_threads(n: int):
    "Cores, threads and torch_threads all `n`, and CPU time n x wall: a forgery that agrees with itself."
    def edit(r):
        r.update(torch_threads=n)
        r['cpu'].update(cores=n, threads=n)
        r['timing']['process_cpu_seconds'] = n * r['timing']['total_seconds']
    return edit


def test_a_record_claiming_a_thousand_threads_everywhere_is_not_counted(tmp_path):
    path = edited(tmp_path, TUNED, forge_threads(1024))
    cost_refused(path, 'torch_threads = 1024', f'MAX_RUN_THREADS = {MAX_RUN_THREADS}')


def test_the_threads_a_run_recorded_must_be_the_threads_its_machine_measured(tmp_path):
    def edit(r):
        r.update(torch_threads=2)  # cpu.threads stays 1: the machine measured one thread
        r['timing']['process_cpu_seconds'] = 2 * r['timing']['total_seconds']
    cost_refused(edited(tmp_path, TUNED, edit), 'torch_threads = 2', 'cpu.threads = 1')


def test_a_record_without_its_training_windows_is_refused_not_counted_unbounded(tmp_path):
    def edit(r):
        r['data'].pop('n_train')
        r['epochs_run'] = 1
        r['timing'].update(seconds_per_epoch=1e6, total_seconds=1e6 + 100.0)  # 277.8 hours, one thread
    cost_refused(edited(tmp_path, OLD, edit), 'data.n_train')


@pytest.mark.parametrize('edit,words', [
    (lambda r: r.update(cpu=[2, 1]), ['cpu = [2, 1]', 'mapping']),
    (lambda r: r['cpu'].update(model=7), ['cpu.model = 7']),
    (lambda r: r['cpu'].update(float32_gflops='fast'), ["cpu.float32_gflops = 'fast'"]),
    (lambda r: r['cpu'].update(cores='2'), ["cpu.cores = '2'"]),
    (lambda r: r.update(pretrain_history={'epochs': 3}), ['pretrain_history']),
    (lambda r: r['data'].update(n_train='5910'), ['data.n_train']),
])
def test_every_field_the_ledger_reads_is_type_checked_naming_the_file(tmp_path, edit, words):
    cost_refused(edited(tmp_path, TUNED, edit), *words)


def _two_edited(r, by: float = 20.0):
    "Two of the record's metrics moved by +by and -by, their mean kept (each still in range)."
    names = ('Desync', 'Fixed-Feat.', 'Rand-Feat.', 'First', 'Last', 'Mid', 'Regular')
    up = next(c for c in names if r['metrics'][c] <= 100 - by)
    down = next(c for c in names if c != up and r['metrics'][c] >= by)
    r['metrics'][up] += by
    r['metrics'][down] -= by


@pytest.mark.parametrize('rel', [TUNED, EIGHT])
def test_metrics_edited_with_their_mean_kept_disagree_with_per_class(tmp_path, rel):
    path = edited(tmp_path, rel, _two_edited)
    raised(lambda: read_record(path), DamagedRecordError, str(path), 'per_class')


def test_every_committed_record_keeps_metrics_and_per_class_together():
    n = 0
    for folder in sorted(p for p in RESULTS.iterdir() if p.is_dir() and p.name != 'checkpoints'):
        n += len(read_records(folder, '**/*.json'))
    assert n > 2000


# --- 4. evaluation records under the record contract ----------------------------------------------

BURSTS = sorted(p.relative_to(RESULTS).as_posix() for p in (RESULTS / 'harc_bursts').glob('prism_bunch_*.json'))[0]
KNOBS = sorted(p.relative_to(RESULTS).as_posix() for p in (RESULTS / 'harc_knobs').glob('*.json'))[0]


@pytest.mark.parametrize('edit,words', [
    (lambda r: r['results']['Random'].update(acc=1000.0), ["results.Random.acc = 1000.0", '[0.0, 100.0]']),
    (lambda r: r['results']['Random'].update(acc=100.0), ['per_class', 'Random']),  # in range, but no mean of its classes
    (lambda r: r['results']['Random']['per_class'].__setitem__(0, 250.0), ['results.Random.per_class[0] = 250.0']),
    (lambda r: r['results'].pop('Two-bursts'), ['results lacks', "'Two-bursts'"]),
    (lambda r: r['results'].update(Extra=r['results']['Random']), ['results holds', "'Extra'"]),
    (lambda r: r['source'].update(path='erm_cnn_s0_8b73d92658df.json'), ['source path', 'erm_cnn_s0_8b73d92658df.json']),
])
def test_a_burst_record_outside_the_contract_is_refused_naming_it(tmp_path, edit, words):
    path = edited(tmp_path, BURSTS, edit)
    raised(lambda: read_record(path), DamagedRecordError, str(path), *words)


def test_burst_frame_does_not_carry_an_edited_accuracy(tmp_path):
    from prism_nb.mend import burst_frame
    path = edited(tmp_path, BURSTS, lambda r: r['results']['Random'].update(acc=1000.0))
    rec = json.loads(path.read_text())
    source = RESULTS / rec['config']['experiment'] / rec['source']['path']
    (tmp_path / 'results' / source.parent.name).mkdir()
    shutil.copy(source, tmp_path / 'results' / source.parent.name / source.name)
    raised(lambda: burst_frame(seeds=[rec['config']['seed']], r_b=rec['config']['hparams']['r_b'],
                               results_dir=tmp_path / 'results'), DamagedRecordError, str(path), '1000.0')


@pytest.mark.parametrize('edit,words', [
    (lambda r: r['results']['Desync'].update({'0.5': 1000.0}), ["results.Desync.0.5 = 1000.0"]),
    (lambda r: r['results'].update(Random=-3.0), ['results.Random = -3.0']),
    (lambda r: r['results']['Desync'].pop('0.5'), ['results.Desync lacks', "'0.5'"]),
])
def test_a_knob_record_outside_the_contract_is_refused_naming_it(tmp_path, edit, words):
    path = edited(tmp_path, KNOBS, edit)
    raised(lambda: read_record(path), DamagedRecordError, str(path), *words)


# --- 5. faults found late: repeated channels, a full disk -----------------------------------------

from prism_nb.config import make_config


def files_under(d: Path) -> list:
    return sorted(p.relative_to(d).as_posix() for p in d.rglob('*')) if d.exists() else []


def test_repeated_channels_are_refused_naming_the_parameter_before_any_file(tmp_path):
    from prism_nb.experiment import run
    twice = ['total_acc_x', 'body_gyro_x', 'total_acc_x']
    raised(lambda: make_config(method='erm', channels=twice), ConfigError, 'channels', "'total_acc_x'")
    raised(lambda: run(dict(method='erm', channels=twice, max_windows=64, epochs=1), results_dir=tmp_path / 'r',
                       progress=False), ConfigError, 'channels', "'total_acc_x'")
    assert files_under(tmp_path) == []  # no record, no lock file


@pytest.fixture
def nearly_full(monkeypatch):
    "Every disk reports 10 MiB free."
    real = shutil.disk_usage
    monkeypatch.setattr(shutil, 'disk_usage', lambda p: real(p)._replace(free=10 * 2**20))


def test_a_full_disk_under_the_results_folder_is_named_before_training(tmp_path, nearly_full):
    from prism_nb.experiment import run
    results = tmp_path / 'results'
    raised(lambda: run(dict(method='erm', max_windows=64, epochs=1), results_dir=results, progress=False),
           ConfigError, 'results folder', str(results), '10 MiB free')
    assert not [p for p in files_under(tmp_path) if p.endswith(('.json', '.pt'))]


def test_a_full_disk_under_the_cache_is_named_before_the_data_are_built(tmp_path, nearly_full, monkeypatch):
    from prism_nb.caches import cached_arrays
    monkeypatch.setenv('PRISM_CACHE', str(tmp_path / 'cache'))
    built = []
    raised(lambda: cached_arrays(tmp_path / 'cache' / 'x.npz', lambda: built.append(1) or {'a': [1]}),
           ConfigError, 'PRISM_CACHE', str(tmp_path / 'cache'), '10 MiB free')
    assert built == []  # nothing built that could not be kept


def test_a_render_on_a_nearly_full_disk_is_refused_in_its_first_cell(tmp_path, nearly_full):
    raised(lambda: render_folders(tmp_path / 'out' / 'tables', tmp_path / 'out' / 'figures'), ConfigError,
           'tables_dir', str(tmp_path / 'out' / 'tables'), '10 MiB free')


# --- 6. a task's own mask of the wrong length (case 1 of the rest) ------------------------------

from prism_nb.config import TASKS, Task, TaskData, observe, observe_tests
from prism_nb.core import ISMTS, derive_seed

L_OWN, SHORT = 32, 4  # the task's windows: 32 steps; the faulty mask: 4 fewer


def _own_windows(n: int, cut: int = 0) -> ISMTS:
    "`n` windows of 32 steps and 2 channels, two classes and two domains; their mask `cut` steps short."
    v = torch.randn(n, L_OWN, 2)
    t = torch.linspace(0, 1, L_OWN).expand(n, L_OWN).contiguous()
    return ISMTS(v, torch.ones(n, L_OWN - cut, 2), t, torch.arange(n) % 2, torch.arange(n) % 2)


def _own_mask_task(name: str, short: str) -> Task:
    "A task whose loader builds the `short` split ('train', 'val' or 'test') with a mask 4 steps short."
    def load(cfg):
        seed, rate = cfg['seed'], cfg['rate']
        train, val, test = (_own_windows(16, SHORT if short == part else 0) for part in ('train', 'val', 'test'))
        return TaskData(train=observe(train, 'Random', rate, derive_seed(seed, 'masks', 'train')),
                        val=observe(val, 'Random', rate, derive_seed(seed, 'masks', 'val')),
                        tests=observe_tests(test, ('Random',), rate, seed),
                        info=dict(n_classes=2, n_domains=2, n_features=2, seq_len=L_OWN))
    return Task(name=name, display=f'Own mask {short}', defaults=dict(rate=0.5), check=lambda cfg: None,
                load=load, evaluate=lambda algo, data, cfg: dict(metrics={'Random': 50.0}),
                record_stem=lambda cfg: ((), f"{cfg['method']}_s{cfg['seed']}"), conditions=('Random',))


@pytest.mark.parametrize('short,part', [('train', 'source training windows (train)'),
                                        ('val', 'source validation windows (val)'),
                                        ('test', "test set 'Random'")])
def test_a_task_whose_own_mask_has_the_wrong_length_is_named_not_the_condition(tmp_path, short, part):
    from prism_nb.experiment import run
    name = f'ownmask{short}'
    with TASKS.temporary(name, _own_mask_task(name, short)):
        msg = raised(lambda: run(dict(dataset=name, method='erm', epochs=1), results_dir=tmp_path / 'r',
                                 progress=False),
                     ValueError, f'task {name}', part, 'mask (m)', f'{L_OWN - SHORT} steps', f'{L_OWN} in its values (v)')
    assert "condition Random's masks" not in msg  # the condition drew nothing wrong
    assert not [p for p in files_under(tmp_path) if p.endswith(('.json', '.pt'))]  # before any training


# --- 7. the results page reads its tables through read_table (case 2 of the rest) ----------------

import ast, re

PAGE = ROOT / 'nbs' / 'results.ipynb'
SPEED_CELL = '3b6c1f1f'  # the Speed paragraph: tables/bench.csv and tables/bench_rewrite.csv


def page_cells() -> dict:
    "The results page's cells by id."
    return {c.get('id'): c for c in json.loads(PAGE.read_text())['cells']}


def page_show(shown: list):
    "The page's own `show` (its first cell), the Markdown it displays appended to `shown`."
    first = ''.join(page_cells()['01012b86']['source'])
    tree = ast.parse(first)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == 'show')
    ns = dict(re=re, display=shown.append, Markdown=lambda text: text)
    exec(ast.get_source_segment(first, fn), ns)
    return ns['show']


def test_the_results_page_reads_no_table_with_pandas_read_csv():
    "Every table the page reads goes through the project's reader (bounded, a regular file inside tables/)."
    raw = [i for i, c in page_cells().items() if c['cell_type'] == 'code' and 'read_csv(' in ''.join(c['source'])]
    assert raw == [], f'cells reading a table with pd.read_csv: {raw}'


def test_the_speed_paragraph_reads_the_bench_tables_through_read_table_and_says_what_it_said(monkeypatch):
    cell = page_cells()[SPEED_CELL]
    read, shown, real = [], [], report.read_table
    monkeypatch.setattr(report, 'read_table', lambda name, *a, **k: read.append(name) or real(name, *a, **k))
    exec(''.join(cell['source']), dict(pd=pd, show=page_show(shown)))
    assert read == ['bench', 'bench_rewrite']
    assert shown == [''.join(cell['outputs'][0]['data']['text/markdown'])]  # the rendered page, unchanged


# --- 8. a name that fits one task's records but not another config's (case 4 of the rest) --------

from prism_nb.algorithms import ALGORITHMS, ERM
from prism_nb.config import record_path
import prism_nb.realworld  # noqa: F401  (the clinical tasks: p12's targets are the longest)

LONG_TARGET = 'Cardiac Surgery Recovery'  # P12's longest held-out unit: 'CardiacSurgeryRecovery' in a stem


class LongNamed(ERM):
    "ERM under a long name."


@pytest.mark.parametrize('extra,stem_length', [(dict(target=LONG_TARGET), 65),
                                               (dict(target=LONG_TARGET, mask_only=True, backbone='mtand'), 76)])
def test_a_method_name_too_long_for_a_config_is_named_at_config_time_not_the_task(tmp_path, extra, stem_length):
    "35 characters register (P12's default stem fits); P12's longest target makes the stem too long: the method is named."
    from prism_nb.experiment import run
    name = 'l' * 35
    over = stem_length - 64
    with ALGORITHMS.temporary(name, LongNamed):
        cfg = dict(method=name, dataset='p12', **extra)
        for attempt in (lambda: make_config(**cfg), lambda: run(cfg, results_dir=tmp_path, progress=False)):
            msg = raised(attempt, ConfigError, f"method name {name!r} (35 characters)", 'task p12',
                         f'a stem of {stem_length} characters', f'{over} more than the 64',
                         f'at most {35 - over} characters')
            assert 'record_stem part' not in msg  # not the task's fault
        assert files_under(tmp_path) == []  # refused before any work
        short = make_config(method=name, dataset='p12')  # the default target: it fits
        assert record_path(short, tmp_path).name.startswith(name)


def test_a_task_stem_too_long_of_its_own_still_names_the_task(tmp_path):
    "A stem long without any registered name in it is the task's own doing, and says so."
    import dataclasses
    from prism_nb.harc import HARC
    long_stem = dataclasses.replace(HARC, name='longstem', display='Long stem', defaults=dict(HARC.defaults, experiment='longstem'),
                                    record_stem=lambda cfg: ((), 'x' * 70))
    with TASKS.temporary('longstem', long_stem):
        raised(lambda: make_config(dataset='longstem'), ConfigError, 'task longstem', "record_stem", '70 characters')


# --- 9. an evaluation record scores the run its training record holds (case 3 of the rest) -------

from prism_nb import records as records_module


def with_training_record(tmp_path, rel: str, edit=lambda r: None) -> tuple:
    "The committed evaluation record `rel` (after `edit`) and the training record it names, in tmp_path/results."
    path = edited(tmp_path, rel, edit)
    rec = json.loads(path.read_text())
    train = RESULTS / rec['config']['experiment'] / rec['source']['path']
    dst = tmp_path / 'results' / rec['config']['experiment'] / rec['source']['path']
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(train, dst)
    return path, dst


def scores_its_run(rel: str):
    "An edit giving an evaluation record the run_uid of the committed training record it names."
    rec = json.loads((RESULTS / rel).read_text())
    uid = json.loads((RESULTS / rec['config']['experiment'] / rec['source']['path']).read_text())['run_uid']
    return lambda r: r['source'].update(run_uid=uid)


def test_a_knob_record_of_a_retrained_model_is_kept_by_knob_frame_and_said(tmp_path, capsys):
    "The knob study scores retrained models on purpose: knob_frame keeps them and says so; other readers do not."
    from prism_nb.paper_severity import knob_frame
    path, train = with_training_record(tmp_path, KNOBS)
    assert len(knob_frame(tmp_path / 'results')) > 0
    said = capsys.readouterr().out
    assert 'retrained' in said and path.name in said and 'left out' not in said, said
    assert records_module.read_records(path.parent) == []  # a reader that does not allow it leaves it out
    said = capsys.readouterr().out
    assert str(path) in said and str(train) in said and 'retrained or replaced' in said, said
    raised(lambda: records_module.check_scored_run(read_record(path), path), records_module.StaleEvaluationError,
           str(path), str(train), json.loads(path.read_text())['source']['run_uid'], json.loads(train.read_text())['run_uid'])
    read_record(path)  # the file alone keeps the contract: the ledger still counts what it cost


def test_a_knob_record_of_its_training_record_s_model_is_read(tmp_path, capsys):
    from prism_nb.paper_severity import knob_frame
    path, _ = with_training_record(tmp_path, KNOBS, scores_its_run(KNOBS))
    assert len(knob_frame(tmp_path / 'results')) > 0 and 'left out' not in capsys.readouterr().out
    records_module.check_scored_run(read_record(path), path)


@pytest.mark.parametrize('rel', [BURSTS, KNOBS])
def test_an_evaluation_whose_training_record_names_another_run_is_left_out_of_every_table(tmp_path, capsys, rel):
    path, train = with_training_record(tmp_path, rel, lambda r: r['source'].update(run_uid='0' * 32))
    assert records_module.read_records(path.parent) == []
    said = capsys.readouterr().out
    assert str(path) in said and str(train) in said and "'00000000000000000000000000000000'" in said, said
    raised(lambda: records_module.check_scored_run(read_record(path), path), DamagedRecordError, str(path), str(train))


def test_an_evaluation_without_its_training_record_has_nothing_to_compare_and_is_read(tmp_path):
    "A folder of evaluations alone (a fixture, 14_analysis's toy records) is read as it is."
    path, train = with_training_record(tmp_path, BURSTS, lambda r: r['source'].update(run_uid='0' * 32))
    assert records_module.read_records(path.parent) == []
    train.unlink()
    assert len(records_module.read_records(path.parent)) == 1


@pytest.mark.parametrize('stale', [False, True])
def test_burst_frame_reads_a_burst_record_only_if_it_scored_its_run(tmp_path, capsys, stale):
    "burst_frame reads each record by its path (not read_records): it checks the scored run the same way."
    from prism_nb.mend import burst_frame
    edit = (lambda r: r['source'].update(run_uid='0' * 32)) if stale else scores_its_run(BURSTS)
    path, train = with_training_record(tmp_path, BURSTS, edit)
    cfg = json.loads(path.read_text())['config']
    rows = burst_frame(seeds=[cfg['seed']], r_b=cfg['hparams']['r_b'], results_dir=tmp_path / 'results')
    said = capsys.readouterr().out
    if stale:
        assert len(rows) == 0 and path.name in said and "'00000000000000000000000000000000'" in said, said
    else:
        assert len(rows) > 0 and 'left out' not in said, said
