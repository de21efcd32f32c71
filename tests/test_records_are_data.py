"""Records are data (issue 34): nothing a results folder holds may run code, delete a file, hang a reader or
change a number. Each class of the issue is reproduced with a results folder crafted as a hostile or careless
user would: a record naming code to run, a checkpoint pointing at `/` or out through a link, a FIFO or
`/dev/zero` in place of a file, scores edited by hand, keys given twice, deep nesting, a plugin or an
installed package claiming a built-in name, a render killed at each rename, parameters that failed late."""
import dataclasses, json, os, shutil, subprocess, sys, threading
from pathlib import Path

import pandas as pd
import pytest

from prism_nb import core, experiment, records
from prism_nb.core import PluginError, ConfigError, load_plugins, folder_path
from prism_nb.algorithms import ALGORITHMS, register_algorithm, Algorithm
from prism_nb.experiment import run, run_from_notebook
from prism_nb.rescore import evaluate, load_model
from prism_nb.config import make_config, record_path, register_task, TASKS
from prism_nb.records import read_record, read_records, record_files, DamagedRecordError, Record
from prism_nb.checkpoints import checkpoint_file, DamagedCheckpointError
from prism_nb.harc import HARC
from prism_nb.report import check_results_dir, publish, finish_publish
from prism_nb.ledger import compute_ledger, records_cpu_hours
from prism_nb.artefacts import harc_records
from prism_nb.sweep import run_sweep

ROOT = Path(__file__).resolve().parent.parent
QUICK = dict(method='erm', epochs=1, patience=1, max_windows=96)
COMMON = {k: v for k, v in QUICK.items() if k != 'method'}

def within(fn, seconds: float = 20.) -> dict:
    "Call `fn` in a thread: {'value': ...} or {'error': ...}; a reader that blocks fails the test."
    box = {}
    def target():
        try: box['value'] = fn()
        except BaseException as e: box['error'] = e
    t = threading.Thread(target=target, daemon=True); t.start(); t.join(seconds)
    assert not t.is_alive(), f'{fn} still blocks after {seconds} s'
    return box

def raised(fn, kind, text: str):
    "`fn` raised `kind` with `text` in its message, without blocking."
    box = within(fn)
    assert isinstance(box.get('error'), kind) and text in str(box['error']), box
    return box['error']

@pytest.fixture(scope='module')
def trained(train_quick):
    "One quick ERM record with its checkpoint, in its own results folder."
    return train_quick(QUICK)

@pytest.fixture
def copy(trained, tmp_path):
    "A private copy of the trained results folder: (results folder, its record file, the record as JSON)."
    results = tmp_path / 'results'; shutil.copytree(trained[0], results)
    path = record_path(make_config(**QUICK), results)
    return results, path, json.loads(path.read_text())

def write(path: Path, rec: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True); path.write_text(json.dumps(rec)); return path

def sweep(results, tmp_path) -> dict:
    "What a sweep of the record's config makes of the folder (nothing is run: no config lacks its record)."
    return run_sweep([make_config(**QUICK)], executor=object(), results_dir=results, out_dir=tmp_path / 'r',
                     threads=1, progress=False)

# --- 1. a record is inert data ------------------------------------------------------------------------------

def marker_plugin(tmp_path) -> tuple:
    "A plugin file that, if ever imported, creates a marker file; (plugin path, marker path)."
    marker, plugin = tmp_path / 'ran.txt', tmp_path / 'helpers.py'
    plugin.write_text(f"from pathlib import Path\nPath({str(marker)!r}).write_text('code ran')\n")
    return plugin, marker

def test_reading_tabulating_and_skipping_never_import_what_a_record_names(copy, tmp_path, capsys):
    results, path, rec = copy
    plugin, marker = marker_plugin(tmp_path)
    sys.path.insert(0, str(tmp_path))  # a module name the record gives would be importable
    try:
        write(path, {**rec, 'plugins': [str(plugin.resolve()), 'helpers', 'this']})
        readers = [lambda: read_record(path), lambda: read_records(results / 'harc'),
                   lambda: check_results_dir(results),
                   lambda: harc_records({'ERM': {'method': 'erm'}}, seeds=[0], results_dir=results, **COMMON),
                   lambda: compute_ledger(results), lambda: records_cpu_hours(results),
                   lambda: run(QUICK, results_dir=results, progress=False)]  # the skip path of a run
        for read in readers: read()
        assert sweep(results, tmp_path)['skipped'] == [path.stem]
        assert not marker.exists() and 'helpers' not in sys.modules
        assert 'Beautiful is better than ugly' not in capsys.readouterr().out  # nor was "this" imported
    finally: sys.path.remove(str(tmp_path))

def test_load_model_names_the_plugins_and_imports_them_only_when_asked(copy, tmp_path):
    results, path, rec = copy
    plugin, marker = marker_plugin(tmp_path)
    write(path, {**rec, 'plugins': [str(plugin.resolve())]})
    for call in [lambda: load_model(path), lambda: evaluate(path, conditions=['Random']),
                 lambda: load_model(read_record(path))]:
        with pytest.raises(PluginError, match=r"plugin\(s\) \['.*helpers.py'\], which this process") as e:
            call()
        assert "plugins='record'" in str(e.value) and not marker.exists()
    asked = evaluate(path, conditions=['Random'], plugins='record')['metrics']['Random']
    assert asked == rec['metrics']['Random'] and marker.exists()  # imported because the caller asked

def test_a_plugin_method_record_is_refused_naming_its_plugin_not_imported(copy, tmp_path):
    results, path, rec = copy
    plugin, marker = marker_plugin(tmp_path)
    cfg = dict(rec['config'], method='radmethod')
    bad = write(path, {**rec, 'config': cfg, 'plugins': [str(plugin.resolve())]})
    with pytest.raises(PluginError, match="unknown method 'radmethod'") as e: read_record(bad)
    assert str(bad) in str(e.value) and 'never imports code' in str(e.value) and not marker.exists()

# --- 2. paths confined: no file deleted, no reader hung -----------------------------------------------------

def test_a_force_rerun_never_deletes_what_a_record_points_at(copy, tmp_path):
    results, path, rec = copy
    precious = tmp_path / 'precious.txt'; precious.write_text('keep me')
    write(path, {**rec, 'checkpoint': {**rec['checkpoint'], 'dir': '/', 'path': str(precious)[1:]}})
    with pytest.raises(DamagedRecordError, match="checkpoint dir '/' must be a folder"): read_record(path)
    again = run(QUICK, results_dir=results, force=True, progress=False)
    assert precious.read_text() == 'keep me' and again['metrics'] == rec['metrics']
    link = results / 'checkpoints' / 'harc' / 'link.pt'; link.symlink_to(precious)  # a link out of the folder
    write(path, {**again, 'checkpoint': {**again['checkpoint'], 'path': 'harc/link.pt'}})
    with pytest.raises(DamagedRecordError, match="checkpoint path 'harc/link.pt' leaves"):
        checkpoint_file(read_record(path), path)
    run(QUICK, results_dir=results, force=True, progress=False)
    assert precious.read_text() == 'keep me' and link.is_symlink()

def test_only_the_old_records_own_model_is_removed(copy, tmp_path):
    results, path, rec = copy
    folder, sha, new = results / 'checkpoints', rec['checkpoint']['sha256'], tmp_path / 'new.pt'
    other = folder / 'harc' / 'someone_elses.pt'; other.write_bytes(b'a model of another run')
    experiment._remove_replaced(other, sha, folder, new)  # its sha256 differs
    outside = tmp_path / 'outside.pt'; shutil.copy(checkpoint_file(rec, path), outside)  # same bytes
    experiment._remove_replaced(outside, sha, folder, new)
    assert other.exists() and outside.exists()
    legacy = {**rec, 'checkpoint': {k: v for k, v in rec['checkpoint'].items() if k != 'dir'}}  # no folder
    assert checkpoint_file(read_record(write(path, legacy)), path) is None  # never a sibling folder's models
    with pytest.raises(FileNotFoundError, match='pass checkpoints_dir='): load_model(path)

def test_fifos_devices_and_huge_files_are_refused_by_name_without_blocking(copy):
    results, path, rec = copy
    ck = checkpoint_file(rec, path); ck.unlink(); os.mkfifo(ck)  # the model replaced by a FIFO
    raised(lambda: evaluate(path), DamagedCheckpointError, f'checkpoint {ck} is not a regular file')
    ck.unlink(); ck.symlink_to('/dev/zero')  # a link to an endless device, inside the folder by name
    raised(lambda: load_model(path), DamagedRecordError, 'leaves')
    raised(lambda: load_model('/dev/zero'), DamagedCheckpointError, '/dev/zero is not a regular file')
    dev = {**rec, 'checkpoint': {**rec['checkpoint'], 'path': 'zero'}}
    raised(lambda: load_model(dev, checkpoints_dir='/dev'), DamagedCheckpointError, 'is not a regular file')
    fifo = path.with_name('erm_cnn_s1_' + '0' * 12 + '.json'); os.mkfifo(fifo)  # a record replaced by a FIFO
    for read in [lambda: read_record(fifo), lambda: read_records(results / 'harc'),
                 lambda: records_cpu_hours(results), lambda: check_results_dir(results)]:
        raised(read, DamagedRecordError, f'record {fifo} is not a regular file')
    fifo.unlink(); fifo.write_bytes(b''); os.truncate(fifo, records.RECORD_MAX_BYTES + 1)  # huge, sparse
    raised(lambda: read_record(fifo), DamagedRecordError, 'more than a record may')

# --- 3. a record's numbers agree with themselves ------------------------------------------------------------

EDITS = [
    ('avg by hand', lambda r: r.update(avg=99.), 'avg = 99.0 is not the mean of its metrics'),
    ('a metric by hand', lambda r: r['metrics'].update(Random=99.), 'is not the mean of its metrics'),
    ('shifted_avg by hand', lambda r: r.update(shifted_avg=r['avg']), 'shifted_avg = '),
    ('shifted_avg dropped', lambda r: r.update(shifted_avg=None), 'shifted_avg = None is not the mean'),
]

@pytest.mark.parametrize('what,edit,msg', EDITS, ids=[e[0] for e in EDITS])
def test_scores_edited_by_hand_are_refused(copy, what, edit, msg):
    results, path, rec = copy
    edit(rec); write(path, rec)
    with pytest.raises(DamagedRecordError, match=str(path.name)) as e: read_record(path)
    assert msg in str(e.value)
    with pytest.raises(DamagedRecordError):
        harc_records({'ERM': {'method': 'erm'}}, seeds=[0], results_dir=results, **COMMON)

def test_keys_given_twice_and_deep_nesting_are_refused_naming_the_file(copy, tmp_path):
    results, path, rec = copy
    path.write_text(json.dumps(rec)[:-1] + ', "avg": 99.0}')
    with pytest.raises(DamagedRecordError, match=r"key\(s\) \['avg'\] given twice"): read_record(path)
    path.write_text('{"a": ' + '[' * 200_000 + ']' * 200_000 + '}')
    raised(lambda: read_record(path), DamagedRecordError, f'{path}: it nests deeper than a record may')
    deep = 0
    for _ in range(40): deep = [deep]
    path.write_text(json.dumps({**rec, 'history': deep}))
    raised(lambda: read_record(path), DamagedRecordError, 'levels deep, more than a record may (32)')
    s = sweep(results, tmp_path)
    assert s['skipped'] == [] and s['failed'][0][0] == path.stem and 'levels deep' in s['failed'][0][1]

def test_files_that_are_not_records_by_name_are_skipped_by_every_reader(copy):
    results, path, rec = copy
    for name in ['harc/notes.json', f'harc/.ipynb_checkpoints/{path.stem}-checkpoint.json', 'summary.json',
                 f'harc/.ipynb_checkpoints/{path.name}', f'checkpoints/harc/{path.name}']:
        (results / name).parent.mkdir(parents=True, exist_ok=True); (results / name).write_text('{"no": 1')
    assert record_files(results, '**/*.json') == [path]
    assert len(read_records(results / 'harc')) == 1 and check_results_dir(results) == results
    assert records_cpu_hours(results)[0] == 1 and compute_ledger(results).records.sum() >= 1

# --- 4. one rule for names ----------------------------------------------------------------------------------

CLAIMS = [("from prism_nb.algorithms import ERM, register_algorithm\n"
           "@register_algorithm('ERM')\nclass Smooth(ERM): 'label smoothing'\n", "method 'erm'"),
          ("from prism_nb.algorithms import ERM, register_algorithm\n"
           "@register_algorithm('PRISM', replace=True)\nclass Fake(ERM): 'not PRISM'\n", "method 'prism'"),
          ("import dataclasses\nfrom prism_nb.harc import HARC\nfrom prism_nb.config import register_task\n"
           "register_task(dataclasses.replace(HARC, display='mine'), replace=True)\n", "task 'harc'")]

def test_a_plugin_cannot_replace_a_built_in_method_or_task(tmp_path):
    erm, prism, harc = ALGORITHMS['erm'], ALGORITHMS['prism'], TASKS['harc']  # as this process has them (a notebook run may redefine them)
    for i, (code, name) in enumerate(CLAIMS):
        p = tmp_path / f'claims_{i}.py'; p.write_text(code)
        with pytest.raises(PluginError, match=f"plugin {p.resolve()}.*{name} is built in and cannot be"):
            load_plugins([str(p)])
    assert ALGORITHMS['erm'] is erm and ALGORITHMS['prism'] is prism and TASKS['harc'] is harc

def test_a_user_name_registered_twice_needs_replace():
    class RadOne(Algorithm): pass
    class RadTwo(Algorithm): pass
    with ALGORITHMS.temporary('radname'):  # the name lent to the block: what is registered in it goes with it
        register_algorithm('RadName')(RadOne)
        with pytest.raises(ValueError, match="method 'radname' is already registered; pass replace=True"):
            register_algorithm('RadName')(RadTwo)
        assert register_algorithm('RadName', replace=True)(RadTwo) is ALGORITHMS['radname'] is RadTwo
    with TASKS.temporary('rad_task', dataclasses.replace(HARC, name='rad_task')):
        with pytest.raises(ValueError, match="task 'rad_task' is already registered"):
            register_task(dataclasses.replace(HARC, name='rad_task'))
    assert 'radname' not in ALGORITHMS and 'rad_task' not in TASKS  # each `with` left its registry as it was

def site_with_entry_point(tmp_path, body: str) -> Path:
    "A folder holding an installed distribution `rad-dist` 0.3 whose plugin entry point is rad_ep."
    site, info = tmp_path / 'site', tmp_path / 'site' / 'rad_dist-0.3.dist-info'
    info.mkdir(parents=True); (site / 'rad_ep.py').write_text(body)
    (info / 'METADATA').write_text('Metadata-Version: 2.1\nName: rad-dist\nVersion: 0.3\n')
    (info / 'entry_points.txt').write_text('[prism_nb.plugins]\nrad = rad_ep\n')
    return site

def fresh(code: str, site: Path) -> subprocess.CompletedProcess:
    "Run `code` in a new Python process that sees the distribution in `site`."
    path = os.pathsep.join([str(site), str(ROOT), os.environ.get('PYTHONPATH', '')])
    return subprocess.run([sys.executable, '-c', code], cwd=ROOT, env={**os.environ, 'PYTHONPATH': path},
                          capture_output=True, text=True)

def test_installed_entry_points_are_named_with_their_distribution(tmp_path):
    site = site_with_entry_point(tmp_path, CLAIMS[0][0])
    done = fresh("from prism_nb.config import make_config; make_config(method='nosuchmethod')", site)
    last = done.stderr.strip().splitlines()[-1]
    assert done.returncode != 0 and 'PluginError' in last and 'entry point rad = rad_ep' in last, last
    assert 'rad-dist 0.3' in last and "method 'erm' is built in and cannot be replaced" in last, last
    (site / 'rad_ep.py').write_text("import no_such_module_anywhere\n")
    done = fresh("from prism_nb.core import load_plugins; load_plugins()", site)
    assert done.returncode != 0 and 'rad-dist 0.3' in done.stderr, done.stderr[-800:]
    assert 'pip uninstall rad-dist' in done.stderr and 'no_such_module_anywhere' in done.stderr

def test_a_record_made_through_an_entry_point_names_it(tmp_path, monkeypatch):
    facts = dict(name='rad', value='rad_ep', dist='rad-dist', version='0.3')
    monkeypatch.setitem(core._ENTRY_POINTS, 'rad', facts)  # as if the installed package had been imported
    rec = run(dict(QUICK, seed=2), results_dir=tmp_path / 'results', progress=False)
    back = read_record(record_path(rec['config'], tmp_path / 'results'))
    assert back['entry_points'] == [facts] and back['plugins'] == []
    write(back.path, {**back, 'entry_points': [{'name': 'rad'}]})
    with pytest.raises(DamagedRecordError, match='entry_points'): read_record(back.path)

# --- 5. renders that cannot lose a file ---------------------------------------------------------------------

def render_set(tag: str) -> tuple:
    "Two tables and a figure, all showing `tag`."
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(1, 1)); ax.set_title(tag)
    tables = {'harc': (pd.DataFrame({'Avg.': [f'{tag} ± 0.1']}, index=['ERM']), {}),
              'eicu': (pd.DataFrame({'x': [tag]}), {})}
    return tables, {'f': fig}

def snapshot(*dirs) -> dict:
    "Every file of the folders: 'folder/name' -> bytes."
    return {p.relative_to(d.parent).as_posix(): p.read_bytes()
            for d in dirs if d.exists() for p in sorted(d.iterdir()) if p.is_file()}

def test_a_render_killed_at_any_rename_leaves_the_old_or_the_new_set(tmp_path, monkeypatch):
    tables, figures = tmp_path / 'out' / 'tables', tmp_path / 'out' / 'figures'
    (old_t, old_f), (new_t, new_f) = render_set('11.00'), render_set('22.00')
    publish(old_t, old_f, tables, figures)
    (tables / 'bench.md').write_text('made by hand')  # a table no render produces: carried over, always
    old = snapshot(tables, figures)
    publish(new_t, new_f, tmp_path / 'ref' / 'tables', tmp_path / 'ref' / 'figures')
    new = snapshot(tmp_path / 'ref' / 'tables', tmp_path / 'ref' / 'figures')
    new['tables/bench.md'] = b'made by hand'
    real, seen = os.replace, []
    for k in range(40):
        calls = [0]
        def dying(a, b, k=k, calls=calls):
            calls[0] += 1
            if calls[0] == k + 1: raise KeyboardInterrupt(f'killed at rename {k + 1}')
            return real(a, b)
        monkeypatch.setattr(os, 'replace', dying)
        try: publish(new_t, new_f, tables, figures); finished = True
        except KeyboardInterrupt: finished = False
        monkeypatch.setattr(os, 'replace', real)
        now = snapshot(tables, figures)
        assert all(now.get(n) in (old.get(n), new.get(n)) for n in set(old) | set(now)), k  # each file whole
        finish_publish(tables, figures)  # what the next render does first
        after = snapshot(tables, figures)
        assert after in (old, new), (k, sorted(after))
        seen.append(after == new)
        if finished: break
        publish(old_t, old_f, tables, figures); assert snapshot(tables, figures) == old  # the old set again
    assert finished and False in seen and True in seen  # killed before the commit: old; after it: new
    assert not [p for p in (tmp_path / 'out').iterdir() if p.name.startswith(('.tables.', '.figures.'))]

def test_render_folders_that_overlap_are_refused_before_any_work(tmp_path):
    t, f = render_set('1.00')
    for tables, figures in [(tmp_path / 'a', tmp_path / 'a'), (tmp_path / 'b', tmp_path / 'b' / 'figures'),
                            (tmp_path / 'c' / 'tables', tmp_path / 'c')]:
        with pytest.raises(ConfigError, match='are the same folder or one'): publish(t, f, tables, figures)
    assert not list(tmp_path.iterdir())

def test_a_swap_of_the_old_render_killed_between_its_renames_is_restored(tmp_path):
    old = tmp_path / '.tables.old-abcd1234'; old.mkdir(); (old / 'bench.md').write_text('by hand')
    t, f = render_set('3.00')
    publish(t, f, tmp_path / 'tables', tmp_path / 'figures')
    assert (tmp_path / 'tables' / 'bench.md').read_text() == 'by hand'
    assert (tmp_path / 'tables' / 'harc.md').exists()

# --- 6. late errors moved before the work -------------------------------------------------------------------

@pytest.mark.parametrize('overrides,msg', [
    (dict(max_windows=2), 'max_windows must be in [6'),
    (dict(rate=1), 'rate 1.0: condition Fixed-Feat. cannot draw its masks'),
    (dict(experiment='realworld'), "experiment 'realworld' is the results folder of"),
    (dict(experiment='harc_shortcut'), "experiment 'harc_shortcut' is the results folder of"),
])
def test_parameters_that_failed_late_fail_before_the_data(tmp_path, monkeypatch, overrides, msg):
    monkeypatch.setenv('PRISM_DATA', str(tmp_path / 'no_data_here'))  # any data access would fail otherwise
    with pytest.raises(ConfigError, match=msg.replace('[', r'\[')):
        run_from_notebook(dict(QUICK, **overrides, results_dir=str(tmp_path / 'results')))
    assert not list(tmp_path.rglob('*.json'))

def test_folders_are_expanded_or_refused(tmp_path, monkeypatch):
    seen = {}
    monkeypatch.setattr(experiment, 'run', lambda cfg, **kw: seen.update(kw) or Record({}, None))
    monkeypatch.setattr(experiment, '_run_line', lambda rec: '')
    monkeypatch.setenv('HOME', str(tmp_path))
    run_from_notebook(dict(QUICK, results_dir='~/runs'))
    assert seen['results_dir'] == tmp_path / 'runs' and folder_path('results_dir', '~') == tmp_path
    for bad in [' results', 'results ', '\tresults']:
        with pytest.raises(ConfigError, match='starts or ends with a blank'):
            run_from_notebook(dict(QUICK, results_dir=bad))
    with pytest.raises(ConfigError, match='ends with a blank'): run_sweep([], results_dir=' results')

def test_a_cache_variable_naming_a_file_is_named_before_the_data(tmp_path, monkeypatch):
    (tmp_path / 'cache').write_text('')
    monkeypatch.setenv('PRISM_CACHE', str(tmp_path / 'cache'))
    monkeypatch.setenv('PRISM_DATA', str(tmp_path / 'no_data_here'))
    with pytest.raises(ConfigError, match=f"PRISM_CACHE='{tmp_path / 'cache'}' cannot be the cache folder"):
        run(QUICK, results_dir=tmp_path / 'results', progress=False)

def test_plugin_folders_and_paths_with_commas(tmp_path):
    pkg = tmp_path / 'rad,pkg'; pkg.mkdir()
    (pkg / '__init__.py').write_text('from .inner import VALUE\n')
    (pkg / 'inner.py').write_text('VALUE = 5\n')
    assert load_plugins(str(pkg)) == [str(pkg.resolve())] and core._PLUGINS[str(pkg.resolve())].VALUE == 5
    (tmp_path / 'plain').mkdir()
    with pytest.raises(PluginError, match='holds no __init__.py'): load_plugins([str(tmp_path / 'plain')])

# --- 7. the run notebook says what it did -------------------------------------------------------------------

def test_a_run_from_a_notebook_says_whether_it_trained(trained, tmp_path, capfd):
    results, rec, path = trained
    done = run_from_notebook(dict(QUICK, results_dir=str(results)))
    out, err = capfd.readouterr()
    model = checkpoint_file(rec, path)
    line = (f"prism_nb run returned the existing record {path} (nothing trained; Avg. {rec['avg']:.2f}); model: {model}. "
            "To retrain it: -p force True (papermill) or force=True (run)")
    assert done['run_uid'] == rec['run_uid'] and line in out and line in err  # notebook, terminal
    made = run_from_notebook(dict(QUICK, seed=1, results_dir=str(tmp_path / 'r')))
    out, err = capfd.readouterr()
    assert f"prism_nb run trained and wrote {record_path(made['config'], tmp_path / 'r')} (Avg. {made['avg']:.2f}); model: " in err
