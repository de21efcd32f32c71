"""The record contract, the ledger, display names and the paper's output folders (issue 53, part 2).

Each class of the issue is reproduced as a careless or hostile user would: a committed record copied to a
temporary results folder and edited (the collapse flag, the selected validation score, the oracle share,
per-class lists), timings no machine could produce, a second task or method shown under a name already shown,
names a command line would read as options, and a render killed half-way or given one folder twice. Every case
must either work or be refused before any work with the file, name or folder in the message."""
import dataclasses, json, re, shutil
from pathlib import Path

import pandas as pd
import pytest
from filelock import FileLock

from prism_nb import report
from prism_nb.algorithms import ALGORITHMS, algorithm_class, register_algorithm
from prism_nb.backbones import BACKBONES
from prism_nb.config import TASKS, register_task
from prism_nb.core import ConfigError
from prism_nb.harc import HARC
from prism_nb.ledger import check_timing, compute_ledger, cpu_seconds, records_cpu_hours
from prism_nb.records import DamagedRecordError, read_record, read_records, write_record
from prism_nb.report import publish
from prism_nb.sampling import CONDITIONS
import prism_nb.harc_tasks, prism_nb.realworld, prism_nb.analysis  # noqa: F401  (every task of results/)

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / 'results'
TUNED = 'harc_tuned/arm_cnn_h1_s0_d1fad8c3318b.json'  # split_metrics, cpu facts, no collapse flag yet
COLLAPSED = 'harc_tuned/mmd_cnn_h9_s1_01f4cf710c39.json'  # collapsed: true, class 5 on every condition
OLD = 'harc/manydg_cnn_m_s2_d96dac803574.json'  # made before the collapse flag (and before cpu facts)
CLINICAL = 'realworld/p12/prism_cnn_CoronaryCare_s1_7df11922ff05.json'  # val_score, no per_class


def copied(tmp_path, rel: str) -> tuple:
    "A committed record copied into a temporary results folder: (its path there, the record as JSON)."
    dst = tmp_path / 'results' / rel
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(RESULTS / rel, dst)
    return dst, json.loads(dst.read_text())


def edited(tmp_path, rel: str, edit) -> Path:
    "The copy of `rel` after `edit(record)` (in place) is written back."
    path, rec = copied(tmp_path, rel)
    edit(rec)
    path.write_text(json.dumps(rec))
    return path


def refused(path: Path, *words):
    "`read_record` refuses `path`, naming the file and every one of `words`."
    with pytest.raises(DamagedRecordError) as e:
        read_record(path)
    msg = str(e.value)
    assert str(path) in msg and all(w in msg for w in words), msg
    return msg


# --- 1. every field a table or a selection rule reads is checked ----------------------------------------

def _set(**kv):
    return lambda r: r.update(kv)


COLLAPSE_CASES = [  # (record, edit, words the refusal names)
    (TUNED, _set(collapsed='no'), ["collapsed = 'no'"]),
    (TUNED, _set(collapsed=1), ['collapsed = 1']),
    (TUNED, _set(collapsed=None), ['collapsed = None']),
    (TUNED, _set(collapsed='false'), ["collapsed = 'false'"]),
    (TUNED, _set(collapsed=True), ['collapsed_class', 'None']),  # collapsed with no class
    (TUNED, _set(collapsed=True, collapsed_class=99), ['collapsed_class', '99', '0 to 5']),
    (TUNED, _set(collapsed=True, collapsed_class=-1), ['collapsed_class', '-1']),
    (TUNED, _set(collapsed=True, collapsed_class=2.0), ['collapsed_class', '2.0']),
    (TUNED, _set(collapsed=True, collapsed_class=True), ['collapsed_class', 'True']),
    (TUNED, _set(collapsed=True, collapsed_class='3'), ['collapsed_class', "'3'"]),
    (TUNED, _set(collapsed=False, collapsed_class=3), ['collapsed is false', 'collapsed_class']),
    (TUNED, _set(collapsed_class=3), ['collapsed is missing', 'collapsed_class']),
    (COLLAPSED, _set(collapsed=False, collapsed_class=None), ['every test condition', 'class 5']),
    (COLLAPSED, _set(collapsed_class=4), ['every test condition', 'class 5', 'collapsed_class = 4']),
    (COLLAPSED, _set(collapsed_class=6), ['collapsed_class', '6']),
]


@pytest.mark.parametrize('rel,edit,words', COLLAPSE_CASES)
def test_the_collapse_fields_are_typed_in_range_and_agree_with_per_class(tmp_path, rel, edit, words):
    refused(edited(tmp_path, rel, edit), *words)


def test_records_with_and_without_the_collapse_flag_read(tmp_path):
    for rel in (TUNED, COLLAPSED, OLD):
        path, rec = copied(tmp_path, rel)
        assert read_record(path)['metrics'] == rec['metrics']
    for rel in (OLD, TUNED):  # made before the flag: they keep reading
        assert 'collapsed' not in read_record(copied(tmp_path, rel)[0])
    assert read_record(edited(tmp_path, TUNED, _set(collapsed=False, collapsed_class=None)))


def _selected(key: str, value):
    "Set the history's entry of the selected epoch to `value` (the record's own field unchanged)."
    def edit(r):
        next(h for h in r['history'] if h['epoch'] == r['selected_epoch'])[key] = value
    return edit


SELECTION_CASES = [
    (TUNED, _set(val_acc=100.0), ['val_acc = 100.0', 'selected epoch (15)', '94.21926736831665']),
    (TUNED, _set(val_acc=94.3), ['val_acc = 94.3']),
    (TUNED, _selected('val_acc', 99.0), ['val_acc', '99.0']),
    (TUNED, _set(selected_epoch=16), ['val_acc', 'selected epoch (16)']),
    (TUNED, _set(selected_epoch=999), ['history has no epoch 999']),
    (TUNED, lambda r: r.update(history=r['history'] + [r['history'][15]]), ['more than one epoch 15']),
    (TUNED, _set(history={'epoch': 15}), ['history', 'not a list of epochs']),
    (TUNED, _selected('val_acc', None), ['holds no val_acc']),
    (CLINICAL, _set(val_score=99.0), ['val_score = 99.0', 'selected epoch (6)']),
]


@pytest.mark.parametrize('rel,edit,words', SELECTION_CASES)
def test_the_selected_score_is_the_histories_selected_epoch(tmp_path, rel, edit, words):
    refused(edited(tmp_path, rel, edit), *words)


def test_the_selected_score_allows_float_round_off_only(tmp_path):
    val = json.loads((RESULTS / TUNED).read_text())['val_acc']
    assert read_record(edited(tmp_path, TUNED, _set(val_acc=val * (1 + 1e-13))))
    refused(edited(tmp_path, TUNED, _set(val_acc=val + 1e-6)), 'val_acc')


def _split(part: str, cond: str, change):
    def edit(r):
        r['split_metrics'][part][cond] = change(r['split_metrics'][part][cond])
    return edit


SPLIT_CASES = [
    (_split('oracle', 'Mid', lambda v: v + 5.0), ['split_metrics', 'Mid', 'oracle share']),
    (_split('oracle', 'Random', lambda v: 100.0), ['Random']),
    (_split('report', 'Desync-P', lambda v: v - 0.01), ['Desync-P']),
    (_split('oracle', 'Mid', lambda v: v + 0.0167), ['Mid']),  # a tenth of a window
    (lambda r: r['split_metrics']['oracle'].pop('Mid-P'), ["split_metrics['oracle']", "'Mid-P'"]),
    (lambda r: r['split_metrics']['report'].update(Extra=50.0), ["'Extra'"]),
    (lambda r: r['split_metrics'].pop('report'), ["'oracle' and 'report'"]),
    (lambda r: r['split_metrics'].update(rest={}), ["'oracle' and 'report'"]),
    (lambda r: r['data'].pop('n_test'), ['data.n_test']),
    (lambda r: r['data'].update(n_test=3000), ['3000 test windows']),  # another test-set size
]


@pytest.mark.parametrize('edit,words', SPLIT_CASES)
def test_the_oracle_share_and_the_rest_make_up_the_whole(tmp_path, edit, words):
    refused(edited(tmp_path, TUNED, edit), *words)


def test_every_committed_split_recombines_within_round_off(tmp_path):
    assert read_record(edited(tmp_path, TUNED, _split('oracle', 'Mid', lambda v: v + 1e-9)))
    mend = sorted((RESULTS / 'harc_mend').glob('*.json'))[0].relative_to(RESULTS).as_posix()
    assert 'split_metrics' in read_record(copied(tmp_path, mend)[0])


PER_CLASS_CASES = [
    (lambda r: r['per_class'].pop('Mid-P'), ['per_class lacks', "'Mid-P'"]),
    (lambda r: r['per_class'].update(Extra=[50.0] * 6), ['per_class holds', "'Extra'"]),
    (lambda r: r['per_class'].update(Mid=r['per_class']['Mid'][:5]), ["'Mid': 5", '6 (data.n_classes)']),
    (lambda r: r['per_class'].update(Mid=r['per_class']['Mid'] + [50.0]), ["'Mid': 7"]),
    (lambda r: r['per_class'].update(Mid=50.0), ["per_class['Mid']", 'not a list']),
    (lambda r: r.update(per_class=[1, 2]), ['per_class', 'not a mapping']),
    (lambda r: r['per_class'].update(Mid=[]), ["'Mid': 0"]),
    (lambda r: r.pop('per_class'), ['per_class is missing']),  # tuned_frame: KeyError 'per_class'
]


@pytest.mark.parametrize('edit,words', PER_CLASS_CASES)
def test_per_class_is_complete_and_has_the_tasks_class_count(tmp_path, edit, words):
    refused(edited(tmp_path, TUNED, edit), *words)


def test_a_tuned_record_lacking_a_condition_is_refused_before_any_table(tmp_path):
    from prism_nb.tuning import tuned_frame
    path = edited(tmp_path, TUNED, lambda r: r['per_class'].pop('Mid-P'))
    with pytest.raises(DamagedRecordError, match=r"per_class lacks \['Mid-P'\]") as e:
        tuned_frame(results_dir=tmp_path / 'results')
    assert str(path) in str(e.value)  # not KeyError: 'Mid-P'


def test_every_committed_record_keeps_the_contract_and_the_ledgers_bounds():
    n = 0
    for folder in sorted(p for p in RESULTS.iterdir() if p.is_dir() and p.name != 'checkpoints'):
        for rec in read_records(folder, '**/*.json'):
            check_timing(rec)
            n += 1
    assert n > 2000


# --- 2. physical bounds the ledger can defend ------------------------------------------------------------

def cost_refused(path: Path, results: Path, *words):
    "Every reader of timings refuses `path`, naming it and `words`."
    for read in (lambda: cpu_seconds(read_record(path)), lambda: records_cpu_hours(results),
                 lambda: compute_ledger(results)):
        with pytest.raises(DamagedRecordError) as e:
            read()
        assert str(path) in str(e.value) and all(w in str(e.value) for w in words), str(e.value)


def _timing(**kv):
    return lambda r: r['timing'].update(kv)


LEDGER_CASES = [  # (edit, words): each a claim no run here could make
    (lambda r: [r.update(torch_threads=1024), r['cpu'].update(threads=1024),
                r['timing'].pop('process_cpu_seconds')], ['torch_threads = 1024', 'cpu.cores = 2']),
    (lambda r: [r.update(torch_threads=1024), r['cpu'].update(threads=1024),
                r['timing'].update(process_cpu_seconds=47.5 * 1024)], ['torch_threads = 1024']),
    (lambda r: r.update(torch_threads=4), ['torch_threads = 4', 'cpu.cores = 2']),
    (lambda r: r['cpu'].update(threads=3), ['cpu.threads = 3', 'cpu.cores = 2']),
    (lambda r: [r.update(torch_threads=2), r['cpu'].update(threads=2),
                r['timing'].update(process_cpu_seconds=94.0)], []),  # two threads on two cores: fine
    (lambda r: [r.update(torch_threads=2), r.pop('cpu')], ['torch_threads = 2', 'no core count']),
    (_timing(process_cpu_seconds=2 * 47.6), ['process_cpu_seconds', 'min(1 thread(s), 2 core(s))']),
    (lambda r: [r.update(epochs_run=1), r['timing'].update(total_seconds=29 * 86400.0,
                                                          process_cpu_seconds=29 * 86400.0)],
     ['total_seconds', 'outside its epochs']),
    (lambda r: [r.update(epochs_run=1), r['timing'].update(
        total_seconds=29 * 86400.0, process_cpu_seconds=29 * 86400.0,
        seconds_per_epoch=29 * 86400.0 - 10)], ['seconds_per_epoch', 'per training window']),
    (_timing(total_seconds=0.0, process_cpu_seconds=0.0), ['total_seconds = 0', 'epochs']),
    (_timing(total_seconds=0.0, process_cpu_seconds=0.0, seconds_per_epoch=0.0,
             pretrain_seconds=0.0), ['seconds_per_epoch = 0', 'floor']),
    (_timing(total_seconds=10.0, process_cpu_seconds=10.0), ['total_seconds = 10', 'epochs']),
    (_timing(seconds_per_epoch=1e-9, total_seconds=1.0, process_cpu_seconds=1.0), ['floor']),
    (_timing(pretrain_seconds=20 * 86400.0, total_seconds=20 * 86400.0 + 47.5,
             process_cpu_seconds=20 * 86400.0), ['pretrain_seconds', 'per training window']),
    (_timing(total_seconds=-1.0), ['total_seconds = -1.0']),
]


@pytest.mark.parametrize('edit,words', LEDGER_CASES)
def test_the_ledger_counts_only_physical_timings(tmp_path, edit, words):
    path = edited(tmp_path, TUNED, edit)
    if not words:
        assert cpu_seconds(read_record(path)) == 94.0
        return
    cost_refused(path, tmp_path / 'results', *words)


def test_an_evaluation_that_took_no_time_is_refused(tmp_path):
    c = dict(method='erm', seed=0)
    p = write_record(dict(kind='harc_probes', design={}, config=c, results={}, seconds=0.0), tmp_path)
    with pytest.raises(DamagedRecordError, match='seconds = 0.0') as e:
        cpu_seconds(read_record(p))
    assert str(p) in str(e.value)


def test_committed_records_count_what_they_measured(tmp_path):
    path, rec = copied(tmp_path, TUNED)
    assert cpu_seconds(read_record(path)) == rec['timing']['process_cpu_seconds']
    path, rec = copied(tmp_path, OLD)  # no process CPU time: wall time x one thread
    assert cpu_seconds(read_record(path)) == rec['timing']['total_seconds']
    path, rec = copied(tmp_path, CLINICAL)  # windows counted as stays
    assert cpu_seconds(read_record(path)) == rec['timing']['total_seconds']


# --- 3. display names under the name rule ----------------------------------------------------------------

HARC_LIKE = ['HAR-C', 'har-c', 'HARC', 'Har C', 'HAR_C', 'H A R C', '\u041d\u0410R-C', '\uff28\uff21\uff32\uff0d\uff23',
             'HAR\u2010C', 'HAR\u2212C', 'HAR\u2013C', 'HAR-\u0421']


@pytest.mark.parametrize('display', HARC_LIKE)
def test_a_second_task_shown_as_harc_is_refused(display):
    task = dataclasses.replace(HARC, name='harc_two', display=display)
    with pytest.raises(ValueError, match="looks like 'HAR-C', how the task 'harc' is shown"):
        try:
            register_task(task)  # as a plugin would
        finally:
            TASKS._entries.pop('harc_two', None), TASKS._display.pop('harc_two', None)
    with pytest.raises(ValueError, match="looks like 'HAR-C', how the task 'harc' is shown"):
        with TASKS.temporary('harc_two', task, display=display):
            pass
    assert 'harc_two' not in TASKS


@pytest.mark.parametrize('display', ['ERM', 'erm', 'E-RM', '\u0415RM', 'ERM\u200b', 'E\u00adRM'])
def test_a_method_shown_as_erm_is_refused(display):
    erm = algorithm_class('erm')
    Erm2 = type('Erm2', (erm,), {'display': display, '__module__': 'my_plugin'})
    with pytest.raises(ValueError, match=r"method 'erm2'.*(looks like 'ERM'|U\+)"):
        try:
            register_algorithm('erm2')(Erm2)
        finally:
            ALGORITHMS._entries.pop('erm2', None), ALGORITHMS._display.pop('erm2', None)


BAD_DISPLAYS = [(' PRISM2', 'starts or ends with a blank'), ('My\u202eMethod', 'U+202E'),
                ('My\nMethod', 'U+000A'), (3, 'must be a str'), ('\u200b', 'U+200B')]


@pytest.mark.parametrize('display,why', BAD_DISPLAYS)
def test_display_names_are_plain_text(display, why):
    erm = algorithm_class('erm')
    with pytest.raises(ValueError, match=rf"(?s)display.*{re.escape(why)}"):
        with ALGORITHMS.temporary('mine2', erm, display=display):
            pass


def test_distinct_displays_and_re_registrations_pass():
    erm = algorithm_class('erm')
    with ALGORITHMS.temporary('erm2', erm, display='ERM (label smoothing)'):
        assert ALGORITHMS.display('erm2') == 'ERM (label smoothing)'
        with ALGORITHMS.temporary('erm2', erm, replace=True, display='ERM (label smoothing)'):
            pass  # its own display is no other entry's
    mine = dataclasses.replace(HARC, name='harc_two', display='HAR-C (mine)')
    with TASKS.temporary('harc_two', mine, display=mine.display):
        assert TASKS.display('harc_two') == 'HAR-C (mine)'
    assert 'erm2' not in ALGORITHMS and 'harc_two' not in TASKS


BAD_NAMES = [('-x', "starts with '-'"), ('.x', "starts with '.'"), ('_x', "starts with '_'"),
             ('+x', "holds '+'"), ('c++', "holds '+'"), ('a..b', "holds '..'"), ('x' * 65, '64 characters')]


@pytest.mark.parametrize('name,why', BAD_NAMES)
def test_names_a_record_stem_or_a_command_line_cannot_take_are_refused_at_registration(name, why):
    erm = algorithm_class('erm')
    for registry in (ALGORITHMS, CONDITIONS, BACKBONES, TASKS):
        with pytest.raises(ValueError, match=rf"{registry.kind} name '{re.escape(name[:20])}.*{re.escape(why)}"):
            with registry.temporary(name, erm):
                pass
    with pytest.raises(ValueError, match=f"method name '{re.escape(name[:20])}"):
        try:
            register_algorithm(name)(type('Odd', (erm,), {'__module__': 'my_plugin'}))
        finally:
            ALGORITHMS._entries.pop(name.lower(), None), ALGORITHMS._display.pop(name.lower(), None)


@pytest.mark.parametrize('name', ['x-', 'a.b', 'v1.2', '2x', 'X' * 35])  # 35: P12's records still file it (issue 61)
def test_plain_names_still_register(name):
    with ALGORITHMS.temporary(name, algorithm_class('erm')):
        assert name.lower() in ALGORITHMS


# --- 4. the paper's output folders, checked first; one render moved in as one step ---------------------

def paper_setup(**params) -> dict:
    "Run paper.ipynb's first code cells (its parameters, with `params` injected as papermill does, and setup)."
    nb = json.loads((ROOT / 'nbs' / 'paper.ipynb').read_text())
    code = [''.join(c['source']) for c in nb['cells'] if c['cell_type'] == 'code']
    ns = {}
    exec(code[0], ns)
    ns.update(params)
    exec(code[1], ns)
    return ns


@pytest.fixture
def results(tmp_path):
    "A results folder holding one record, enough for the render's opening check."
    write_record(dict(config=dict(method='erm', seed=0), metrics={'Random': 50.0}), tmp_path / 'results')
    return str(tmp_path / 'results')


def render_set(tag: str) -> tuple:
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(1, 1))
    ax.set_title(tag)
    return {'harc': (pd.DataFrame({'Avg.': [tag]}, index=['ERM']), {})}, {'f': fig}


def snapshot(*dirs) -> dict:
    return {p.relative_to(d.parent).as_posix(): p.read_bytes()
            for d in dirs if d.exists() for p in sorted(d.iterdir()) if p.is_file()}


@pytest.mark.parametrize('tables,figures', [('out', 'out'), ('out', 'out/figures'), ('out/tables', 'out'),
                                            ('out/./t', 'out/t')])
def test_the_paper_refuses_one_folder_for_tables_and_figures_in_its_first_cell(tmp_path, results, tables,
                                                                               figures):
    with pytest.raises(ConfigError, match='are the same folder or one lies inside the other'):
        paper_setup(results_dir=results, tables_dir=str(tmp_path / tables), figures_dir=str(tmp_path / figures))
    assert not (tmp_path / 'out').exists()


def test_the_paper_refuses_a_file_as_an_output_folder_in_its_first_cell(tmp_path, results):
    (tmp_path / 'tables').write_text('not a folder')
    with pytest.raises(ConfigError, match=re.escape(f"tables_dir {tmp_path / 'tables'} is a file")):
        paper_setup(results_dir=results, tables_dir=str(tmp_path / 'tables'), figures_dir=str(tmp_path / 'f'))


def test_a_render_killed_between_figures_and_tables_is_completed_before_the_next_render_works(
        tmp_path, results, monkeypatch):
    tables, figures = tmp_path / 'out' / 'tables', tmp_path / 'out' / 'figures'
    (old_t, old_f), (new_t, new_f) = render_set('11.00'), render_set('22.00')
    publish(new_t, new_f, tmp_path / 'ref' / 'tables', tmp_path / 'ref' / 'figures')
    new = {k.replace('ref/', ''): v for k, v in snapshot(tmp_path / 'ref' / 'tables',
                                                          tmp_path / 'ref' / 'figures').items()}
    publish(old_t, old_f, tables, figures)
    old = snapshot(tables, figures)
    real = report._move_in

    def killed(src, live):
        if Path(live) == tables:
            raise KeyboardInterrupt('killed between moving in figures and tables')
        return real(src, live)

    monkeypatch.setattr(report, '_move_in', killed)
    with pytest.raises(KeyboardInterrupt):
        publish(new_t, new_f, tables, figures)
    monkeypatch.setattr(report, '_move_in', real)
    left = snapshot(tables, figures)
    assert left['figures/f.png'] == new['figures/f.png'] and left['tables/harc.md'] == old['tables/harc.md']
    ns = paper_setup(results_dir=results, tables_dir=str(tables), figures_dir=str(figures))
    assert snapshot(tables, figures) == new  # the next render's first cell moved the rest in
    assert not [p for p in (tmp_path / 'out').iterdir() if p.name.startswith('.tables.')]
    assert (ns['tables'], ns['figures']) == (tables, figures)


def test_the_first_cell_waits_for_no_render_and_leaves_a_running_one_alone(tmp_path, results):
    tables, figures = tmp_path / 'out' / 'tables', tmp_path / 'out' / 'figures'
    tables.parent.mkdir()
    staging = tmp_path / 'out' / '.tables.staging-abcd1234'
    staging.mkdir()
    with FileLock(str(tables.parent / '.render.lock')):  # another render is writing its set
        with pytest.raises(RuntimeError, match='another render holds'):
            paper_setup(results_dir=results, tables_dir=str(tables), figures_dir=str(figures))
    assert staging.exists()  # its staging folder is not taken for a killed render's


def test_the_paper_opens_with_separate_folders(tmp_path, results):
    ns = paper_setup(results_dir=results, tables_dir=str(tmp_path / 't'), figures_dir=str(tmp_path / 'f'))
    assert (ns['tables'], ns['figures']) == (tmp_path / 't', tmp_path / 'f')
