"""The scripts of tools/ do what their command line says or refuse it (issue 61): each parses its arguments with
argparse, abbreviations off, so a typo of a flag (`--pla` for `--plan`), an unknown flag, a count that is not a
whole number of at least 1, or an extra argument is refused with the usage line and exit status 2 before the
script imports torch, prism_nb, nbdev or pandas and before any work; a missing results folder, or a missing folder
of records a script chooses from, is named (exit status 1), also before the heavy imports. tools/mend_bursts.py
scores every model it can when one checkpoint is damaged, and names the damaged ones.

Each script runs in a fresh interpreter through a small runner that says, at exit, which heavy modules were
imported; PRISM_RESULTS points at a folder of the test's own, which must be left as it was."""
import importlib.util, os, subprocess, sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ROOT / 'tools'
HEAVY = ('torch', 'prism_nb', 'nbdev', 'pandas', 'papermill', 'yaml')
RUNNER = f'''
import runpy, sys
sys.path.insert(0, {str(TOOLS)!r})
script, sys.argv = sys.argv[1], sys.argv[1:]
try:
    runpy.run_path(script, run_name='__main__')
finally:
    print('HEAVY IMPORTS: ' + ' '.join(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)
'''


def run_tool(script: str, *args, results=None, timeout=300) -> subprocess.CompletedProcess:
    "Run tools/`script` with `args` as a user would, PRISM_RESULTS at `results` (default: a folder that is not there)."
    env = {**os.environ, 'PRISM_RESULTS': str(results or '/nonexistent/prism-results'), 'PYTHONDONTWRITEBYTECODE': '1'}
    return subprocess.run([sys.executable, '-c', RUNNER, str(TOOLS / script), *args], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=timeout)


def heavy_imports(done: subprocess.CompletedProcess) -> list:
    "The heavy modules the script imported before it ended, as the runner reports them."
    line = [ln for ln in done.stderr.splitlines() if ln.startswith('HEAVY IMPORTS:')]
    assert line, f'the runner did not report: {done.stderr[-2000:]}'
    return line[-1].split(':', 1)[1].split()


BAD_COMMAND_LINES = [  # (script, arguments, what the usage error says)
    ('fresh_seed_runs.py', ['1', '--pla'], 'unrecognized arguments: --pla'),
    ('fresh_seed_runs.py', ['abc'], "argument workers: 'abc' is not a whole number"),
    ('fresh_seed_runs.py', ['0', '--plan'], 'argument workers: must be at least 1, got 0'),
    ('fresh_seed_runs.py', ['2', '3'], 'unrecognized arguments: 3'),
    ('mend_bursts.py', ['--wach'], 'unrecognized arguments: --wach'),
    ('mend_bursts.py', ['--wat'], 'unrecognized arguments: --wat'),  # an abbreviation is no flag
    ('mend_bursts.py', ['watch'], 'unrecognized arguments: watch'),
    ('leader_seed_runs.py', ['--work', '3'], 'unrecognized arguments: --work 3'),
    ('bunching_runs.py', ['2', 'men'], "argument stop: invalid choice: 'men'"),
    ('bunching_runs.py', ['two'], "argument workers: 'two' is not a whole number"),
    ('tuned_search.py', ['2', '0'], 'argument last_draw: must be at least 1, got 0'),
    ('tuned_search.py', ['2', '9', '1'], 'unrecognized arguments: 1'),
    ('severity_class_runs.py', ['-1'], 'argument workers: must be at least 1, got -1'),
    ('paper_severity_runs.py', ['two'], "argument workers: 'two' is not a whole number"),
    ('bunching_probe.py', ['--watch'], 'unrecognized arguments: --watch'),
    ('rerun_runs.py', ['1'], 'unrecognized arguments: 1'),
    ('lint.py', ['--fix'], 'unrecognized arguments: --fix'),
    ('render_readme.py', ['--verb'], 'unrecognized arguments: --verb'),
    ('refresh_index.py', ['indx'], "no such notebook to refresh: ['indx']"),
    ('render_outputs.py', ['--on', 'x'], 'unrecognized arguments: --on'),
    ('bench_backbones.py', ['--step', '3'], 'unrecognized arguments: --step 3'),
    ('bench_backbones.py', ['--threads', '0'], 'argument --threads: must be at least 1, got 0'),
    ('build_docs.py', ['--kee', 'x'], 'unrecognized arguments: --kee x'),
    ('check_docs.py', ['--doc', 'x'], 'unrecognized arguments: --doc x'),
]


@pytest.mark.parametrize('script,args,said', BAD_COMMAND_LINES, ids=[f"{s} {' '.join(a)}" for s, a, _ in BAD_COMMAND_LINES])
def test_a_bad_command_line_is_refused_before_any_work(tmp_path, script, args, said):
    results = tmp_path / 'results'
    results.mkdir()
    done = run_tool(script, *args, results=results)
    assert done.returncode == 2, f'exit {done.returncode}: {done.stdout[-1500:]} {done.stderr[-1500:]}'
    assert f'usage: {script}' in done.stderr and said in done.stderr, done.stderr[-2000:]
    assert heavy_imports(done) == [], 'refused only after importing the heavy modules'
    assert list(results.iterdir()) == [] and done.stdout == '', 'work started before the refusal'


def test_every_script_is_covered():
    "Each script of tools/ that takes a command line has a bad one above (run_all.sh, build_docs.sh: bash)."
    scripts = {p.name for p in TOOLS.glob('*.py') if not p.name.startswith('_')}
    assert scripts == {s for s, _, _ in BAD_COMMAND_LINES}


MISSING_FOLDERS = [  # (script, arguments, whether the results folder is there (empty), the folder to be named)
    ('fresh_seed_runs.py', ['--plan'], False, ''),
    ('fresh_seed_runs.py', ['--plan'], True, 'harc_tuned'),
    ('mend_bursts.py', [], False, ''),
    ('mend_bursts.py', ['--watch'], True, 'harc_mend'),
    ('tuned_search.py', ['1', '1'], False, ''),
    ('severity_class_runs.py', [], False, ''),
    ('bunching_runs.py', ['1', 'mend'], False, ''),
    ('bunching_probe.py', [], False, ''),
    ('bunching_probe.py', [], True, ''),  # a results folder without any folder of models
]


@pytest.mark.parametrize('script,args,there,named', MISSING_FOLDERS,
                         ids=[f"{s} {' '.join(a)} {'empty' if t else 'missing'}" for s, a, t, _ in MISSING_FOLDERS])
def test_a_missing_results_folder_is_named_before_any_work(tmp_path, script, args, there, named):
    results = tmp_path / 'results'
    if there:
        results.mkdir()
    done = run_tool(script, *args, results=results)
    assert done.returncode == 1, f'exit {done.returncode}: {done.stdout[-1500:]} {done.stderr[-1500:]}'
    assert f'{results / named if named else results}' in done.stderr, done.stderr[-2000:]
    assert 'NoneType' not in done.stderr and 'Traceback' not in done.stderr, done.stderr[-2000:]
    assert heavy_imports(done) == []
    assert not results.exists() or list(results.iterdir()) == [], 'work started'


def test_check_docs_names_a_site_that_is_not_built(tmp_path):
    done = run_tool('check_docs.py', '--docs', str(tmp_path / '_docs'))
    assert done.returncode == 2 and f"--docs {tmp_path / '_docs'}: no such folder" in done.stderr, done.stderr[-2000:]


@pytest.fixture
def mend_bursts():
    "tools/mend_bursts.py as a module (its work is under `if __name__ == '__main__'`)."
    sys.path.insert(0, str(TOOLS))
    try:
        spec = importlib.util.spec_from_file_location('mend_bursts', TOOLS / 'mend_bursts.py')
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(TOOLS))


def test_one_damaged_checkpoint_does_not_stop_the_others(mend_bursts, capsys):
    sources = [Path(f'results/harc_mend/prism_bunch_cnn_s{s}_0123456789ab.json') for s in range(10, 14)]

    def score(src):  # the second model's checkpoint is truncated; the fourth is on another machine
        if src is sources[1]:
            raise EOFError('Ran out of input')
        return None if src is sources[3] else f'{src.name}: One-burst 80.0, Two-bursts 70.0'

    damaged = {}
    assert mend_bursts.score_models(sources, score, damaged) == 2
    said = capsys.readouterr().out
    assert f'{sources[0].name}: One-burst' in said and f'{sources[2].name}: One-burst' in said  # scored after it
    assert f'{sources[1].name}: DAMAGED, not scored: EOFError: Ran out of input' in said
    assert f'{sources[3].name}: no checkpoint here' in said
    assert damaged == {sources[1].name: 'EOFError: Ran out of input'}
    assert mend_bursts.score_models(sources, score, damaged) == 2  # --watch's next look: not tried again
    assert 'DAMAGED' not in capsys.readouterr().out
    report = mend_bursts.damaged_report(damaged)
    assert report.startswith('1 model(s) with a damaged checkpoint, not scored') and sources[1].name in report
