"""The tuning protocol for anyone's methods, as users run it: two plugin methods (the example package's SpecDecoup and
the one-file LabelSmooth) placed in one folder at the smoke size with the `prism_protocol` command, each in a fresh
process; the folder's leaderboard lists both beside the committed recipes; a reader without one plugin still reads
the rest; the plan comes before any run; partial and concurrent work is refused; the committed results/ is never
touched; the same configs on a Dask cluster give the same records."""
import json, subprocess, sys
from concurrent.futures import Future
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = 'examples/prism_nb_example/prism_nb_example'  # relative: read from the repository root
ONE_FILE = 'examples/label_smooth.py'
CLI = Path(sys.executable).with_name('prism_protocol')  # the console scripts `pip install` puts beside python
BOARD = Path(sys.executable).with_name('prism_leaderboard')


def committed_status() -> dict:
    "The committed folder's files of the methods these tests run, with their times: what must stay as it was."
    names = ('specdecoup', 'labelsmooth', 'lazy', 'erm_cnn_s11', '.protocol-')
    return {p: p.stat().st_mtime_ns for p in (ROOT / 'results').rglob('*') if any(n in p.name for n in names)}


def place(folder, method, plugin, *extra, cwd=None):
    "One placement, as a user types it, in its own process."
    cmd = [str(CLI), method, '--plugins', plugin, '--quick', '--workers', '2', '--results_dir', str(folder), *extra]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd or ROOT)


@pytest.fixture(scope='module')
def placed(tmp_path_factory):
    "Two methods placed in one folder at the smoke size, one after the other."
    folder = tmp_path_factory.mktemp('placed')
    before = committed_status()
    outs = {}
    # the second placement names both plugins, so its tables list both methods (records never import code)
    for method, plugin in (('specdecoup', PACKAGE), ('labelsmooth', f'{ONE_FILE},{PACKAGE}')):
        done = place(folder, method, plugin)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
        outs[method] = done.stdout
    assert committed_status() == before  # nothing written among the committed records
    return folder, outs


def test_the_plan_comes_first_with_runs_and_cpu_hours(placed):
    _, outs = placed
    first = outs['specdecoup'].splitlines()[0]
    assert first.startswith('specdecoup, quick size (a smoke run') and 'runs: search 3 (3 left), fresh seeds 1' in first
    assert 'CPU hours left' in outs['specdecoup'].splitlines()[1]


def test_both_methods_are_placed_and_listed_beside_the_committed_recipes(placed):
    folder, outs = placed
    assert 'specdecoup: recipe = draw ' in outs['specdecoup'] and 'labelsmooth: recipe = draw ' in outs['labelsmooth']
    assert sorted(p.name.split('_')[0] for p in (folder / 'harc_fresh').glob('*.json')) == ['labelsmooth', 'specdecoup']
    table = (folder / 'protocol' / 'leaderboard_harc_ps.md').read_text()
    paired = (folder / 'protocol' / 'leaderboard_harc_ps_paired.md').read_text()
    for row in ('| ERM |', '| PRISM |', 'SpecDecoup (draw', 'LabelSmooth (draw', 'quick: not comparable'):
        assert row in table, row
    for name in ('SpecDecoup', 'LabelSmooth'):  # each against PRISM and the best committed baseline
        assert paired.count(f'| {name} (draw') == 2, paired
    assert 'not assessed (1 paired seed' in paired  # one fresh seed at the smoke size: no interval
    assert 'quick size: a smoke run' in outs['labelsmooth']
    provenance = (folder / 'protocol' / 'provenance.md').read_text()
    assert 'label_smooth.py' in provenance and '2 draws x 1 trial seeds' in provenance
    assert (folder / 'notebooks').is_dir() and not list(folder.glob('*.ipynb'))  # notebooks in the folder's own


def test_a_second_run_trains_nothing(placed):
    folder, _ = placed
    stamps = {p: p.stat().st_mtime_ns for p in folder.rglob('*.json')}
    done = place(folder, 'labelsmooth', ONE_FILE)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "this placement's recorded runs" in done.stdout
    assert 'left out: made with plugin(s)' in done.stdout  # SpecDecoup's rows, without its plugin: named  # the plan priced from the runs it has
    assert {p: p.stat().st_mtime_ns for p in folder.rglob('*.json') if p in stamps} == stamps


def test_a_reader_without_one_plugin_reads_the_rest(placed):
    folder, _ = placed
    done = subprocess.run([str(BOARD), '--folder', str(folder), '--plugins', ONE_FILE], capture_output=True,
                          text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    assert 'LabelSmooth (draw' in done.stdout and 'SpecDecoup (draw' not in done.stdout
    assert 'left out: made with plugin(s)' in done.stdout and 'prism_nb_example' in done.stdout


def test_plugins_and_folders_are_read_from_the_repository_root_anywhere(tmp_path):
    done = place('runs/never', 'labelsmooth', ONE_FILE, '--plan', cwd=tmp_path)  # a shell elsewhere
    assert done.returncode == 0, done.stderr[-3000:]
    assert f'folder: {ROOT / "runs/never"}' in done.stdout and not (tmp_path / 'runs').exists()


def test_a_file_for_a_folder_is_refused_before_any_run(tmp_path):
    (tmp_path / 'f').write_text('x')
    done = place(tmp_path / 'f', 'labelsmooth', ONE_FILE)
    assert done.returncode != 0 and 'is a file, not a folder' in done.stderr


def test_an_unsearched_knob_is_refused_before_any_run(tmp_path):
    plugin = tmp_path / 'lazy.py'
    plugin.write_text(
        "from prism_nb.algorithms import ERM, register_algorithm\n"
        "@register_algorithm('Lazy')\nclass Lazy(ERM):\n    'ERM with a knob nobody searches.'\n"
        "    @classmethod\n    def defaults(cls): return {**super().defaults(), 'unsearched': 1.0}\n"
        "    @classmethod\n    def hparam_space(cls): return {**super().hparam_space(), 'unsearched': (0., 2.)}\n")
    done = place(tmp_path / 'r', 'lazy', str(plugin))
    assert done.returncode != 0 and 'unsearched' in done.stderr, done.stderr[-2000:]
    assert not (tmp_path / 'r' / 'harc').exists()


class FailingDraw:
    "An executor whose runs all fail: the search is partial."

    def submit(self, fn, cmd, *args):
        f = Future()
        f.set_result((1, 'Traceback ...\nValueError: draw 1 diverged'))
        return f


PROBE = dict(setup=1.0, per_epoch=1.0, per_pretrain_epoch=0.0)


def test_a_failed_draw_fails_the_protocol_naming_it(tmp_path):
    from prism_nb.protocol import run_protocol, ProtocolError
    with pytest.raises(ProtocolError, match=r'search: 3 run\(s\) failed.*\n.*ValueError: draw 1 diverged'):
        run_protocol('erm', size='quick', results_dir=tmp_path, executor=FailingDraw(), probe=PROBE,
                     progress=False)
    assert not (tmp_path / 'protocol').exists()  # no recipe, no table from a partial search


def test_a_second_placement_of_the_same_method_on_one_folder_is_refused(tmp_path):
    from prism_nb.protocol import run_protocol, protocol_lock, ProtocolBusy
    held = protocol_lock(tmp_path, 'erm')
    try:
        with pytest.raises(ProtocolBusy, match='another placement of erm is running on'):
            run_protocol('erm', size='quick', results_dir=tmp_path, executor=FailingDraw(), probe=PROBE,
                         progress=False)
    finally:
        held.release()


def test_the_design_cards_command_with_a_new_seed_leaves_results_untouched(tmp_path):
    before = committed_status()
    cmd = [sys.executable, '-m', 'papermill', 'nbs/run_harc.ipynb', str(tmp_path / 'out.ipynb'), '-p', 'method',
           'erm', '-p', 'seed', '11', '-p', 'max_windows', '128', '-p', 'epochs', '1']
    env = dict(__import__('os').environ, PRISM_RUNS=str(tmp_path / 'runs'))
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(list((tmp_path / 'runs' / 'harc').glob('erm_cnn_s11_*.json'))) == 1
    assert committed_status() == before


def test_the_same_placement_on_a_dask_cluster_gives_the_same_records(placed, tmp_path):
    distributed = pytest.importorskip('distributed', exc_type=ImportError)
    from prism_nb.protocol import run_protocol
    folder, _ = placed
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        run_protocol('labelsmooth', plugins=[ONE_FILE], size='quick', results_dir=tmp_path, executor=client,
                     probe=PROBE, progress=False)
    local = {p.name: json.loads(p.read_text()) for p in folder.rglob('labelsmooth_*.json')}
    remote = {p.name: json.loads(p.read_text()) for p in tmp_path.rglob('labelsmooth_*.json')}
    assert sorted(local) == sorted(remote) and len(local) == 4
    for name, rec in remote.items():
        assert rec['metrics'] == local[name]['metrics'] and rec['config'] == local[name]['config'], name


@pytest.mark.skipif(__import__('os').environ.get('PRISM_SLOW') != '1',
                    reason='the medium size trains 21 runs (about 10 minutes on 2 cores): PRISM_SLOW=1 runs it')
def test_the_medium_size_gives_a_first_paired_comparison(tmp_path):
    done = place(tmp_path, 'labelsmooth', ONE_FILE)  # quick first: medium is a separate row
    cmd = [str(CLI), 'labelsmooth', '--plugins', ONE_FILE, '--size', 'medium', '--workers', '2',
           '--results_dir', str(tmp_path)]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    assert 'medium size (half the search' in done.stdout and 'search 18 (18 left), fresh seeds 3 (3 left)' in done.stdout
    paired = (tmp_path / 'protocol' / 'leaderboard_harc_ps_paired.md').read_text()
    medium = [l for l in paired.splitlines() if 'LabelSmooth (draw' in l and 'quick' not in l]
    assert len(medium) == 2 and all('| 3 |' in l and 'not assessed' not in l for l in medium), paired
