"""What a newcomer meets first (issue 54), tried as they would try it:

- a run through papermill, without `--log-output`, shows its epoch lines and a closing line with the score (Avg., or
  a clinical run's AUROC/AUPRC) and where the record went, in the terminal that started it;
- a relative results folder given to `run` from a notebook's kernel (which starts in nbs/) lands where papermill and
  the shell put it: under the repository root;
- a scratch notebook in nbs/ is named in one line that says what to do;
- the test command names each notebook as nbdev_test takes it and each test as pytest runs it;
- no module of the package imports the package back (experiment once did, for `__version__`);
- `pip show prism_nb` names no placeholder (a Home-page for a repository that does not exist);
- the test command prints each notebook's seconds as nbdev_test completes it;
- a study page shows prose, figures and tables on the site, its tests hidden there (`#| hide`) and run by nbdev_test."""
import ast, json, os, re, subprocess, sys
from pathlib import Path

import pytest

from conftest import scratch_message, scratch_notebooks

ROOT = Path(__file__).resolve().parent.parent
EPOCH = re.compile(r'ERM fit epoch (\d+)/(\d+): ')


def papermill(notebook: str, out: Path, results: Path, *extra, **params) -> list:
    "The terminal of `papermill nbs/<notebook>.ipynb out -p ...`, run as the README runs it: its lines."
    cmd = [sys.executable, '-m', 'papermill', str(ROOT / 'nbs' / f'{notebook}.ipynb'), str(out),
           '-p', 'results_dir', str(results), *extra]
    for k, v in params.items():
        cmd += ['-p', k, str(v)]
    res = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert res.returncode == 0, res.stdout[-3000:]
    return res.stdout.replace('\r', '\n').splitlines()


def test_a_papermill_run_shows_its_epochs_and_its_score_without_log_output(tmp_path):
    lines = papermill('run_harc', tmp_path / 'out.ipynb', tmp_path / 'results',
                      method='erm', seed=11, max_windows=200, epochs=2, patience=2)
    epochs = [m.groups() for x in lines if (m := EPOCH.search(x))]
    assert epochs == [('1', '2'), ('2', '2')], lines
    closing = [x for x in lines if 'prism_nb run ' in x]
    assert len(closing) == 1, lines
    record = next((tmp_path / 'results' / 'harc').glob('*.json'))
    avg = json.loads(record.read_text())['avg']
    assert f'prism_nb run trained and wrote {record} (Avg. {avg:.2f}); model: ' in closing[0], closing
    assert all(not x.startswith('ERM fit') or x == x.strip() for x in lines), 'an epoch line joined to another'
    notebook = (tmp_path / 'out.ipynb').read_text()
    assert 'ERM fit epoch 2/2' in notebook and f'(Avg. {avg:.2f})' in notebook  # and the notebook shows them


def test_a_clinical_run_shows_its_epochs_and_its_scores_without_log_output(tmp_path):
    lines = papermill('run_realworld', tmp_path / 'out.ipynb', tmp_path / 'results',
                      dataset='eicu_demo', target='West', epochs=2, patience=2)
    assert len([x for x in lines if EPOCH.search(x)]) == 2, lines
    record = next((tmp_path / 'results').glob('realworld/*/*.json'))
    metrics = json.loads(record.read_text())['metrics']
    closing = [x for x in lines if 'prism_nb run trained and wrote' in x]
    assert len(closing) == 1 and str(record) in closing[0], lines
    assert all(f'{k} {v:.2f}' in closing[0] for k, v in metrics.items()), closing


def test_a_relative_results_folder_from_a_notebook_kernel_lands_under_the_repository_root(tmp_path, monkeypatch):
    from prism_nb.experiment import run
    rel = os.path.relpath(tmp_path / 'runs' / 'mine', ROOT)  # as `-p results_dir` would name it from the root
    monkeypatch.chdir(ROOT / 'nbs')  # where JupyterLab starts a notebook's kernel
    rec = run(dict(method='erm', epochs=1, patience=1, max_windows=128), results_dir=rel, progress=False)
    assert Path(rec.path).resolve().is_relative_to(tmp_path / 'runs' / 'mine'), rec.path
    assert list((tmp_path / 'runs' / 'mine' / 'checkpoints').rglob('*.pt'))


def test_a_scratch_notebook_is_named_in_one_line_with_what_to_do(tmp_path):
    (tmp_path / 'nbs').mkdir()
    (tmp_path / 'nbs' / 'sidebar.yml').write_text('website:\n  sidebar:\n    contents:\n      - index.ipynb\n')
    for name in ('index.ipynb', 'Untitled.ipynb', 'Untitled1.ipynb'):
        (tmp_path / 'nbs' / name).write_text('{}')
    found = scratch_notebooks(tmp_path)  # not a git checkout: the sidebar alone says what is the project's
    assert found == ['Untitled.ipynb', 'Untitled1.ipynb']
    msg = scratch_message(found)
    assert '\n' not in msg and 'Untitled.ipynb, Untitled1.ipynb' in msg
    assert 'move a scratch notebook out of nbs/' in msg and 'list a new one in nbs/sidebar.yml' in msg
    assert scratch_notebooks() == [], 'this checkout has a scratch notebook in nbs/'


def shell_functions(script: str) -> str:
    "The function definitions of a bash script (`name() {` to the `}` that starts a line), to run one on its own."
    return '\n'.join(re.findall(r'^\w+\(\) \{\n.*?^\}$', script, re.M | re.S))


def test_the_test_command_names_each_notebook_as_nbdev_test_takes_it():
    script = (ROOT / 'tools' / 'run_all.sh').read_text()
    nbdev_test = re.search(r'^(?:\s*\w+=\S+ )*\s*nbdev_test .*$', script, re.M).group(0)
    assert '--n_workers 2' in nbdev_test and "--skip_file_re '^run_|^paper|^results'" in nbdev_test
    assert re.search(r'^notebook_tests$', script, re.M), 'run_all.sh no longer runs notebook_tests'
    res = subprocess.run(['bash', '-c', f'set -euo pipefail\n{shell_functions(script)}\nnotebook_tests --path nbs/00a_paths.ipynb'],
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert res.returncode == 0, res.stdout[-2000:]
    assert re.search(r'Starting .*00a_paths\.ipynb\n(.*\n)*- Completed .*00a_paths\.ipynb in \d+ s\n', res.stdout), res.stdout
    assert res.stdout.rstrip().endswith('Success.'), res.stdout  # nbdev_test's other lines pass through as they were
    pytest_line = re.search(r'^python -m pytest .*$', script, re.M).group(0)
    assert ' -q' not in pytest_line and ' -v' in pytest_line and '--durations' in pytest_line


def imports_of_the_package(source: str) -> list:
    "The lines of a module's `source` that import the package `prism_nb` itself (its __init__), not a module of it."
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and ((node.level == 1 and not node.module)
                                                 or (node.level == 0 and node.module == 'prism_nb')):
            found.append(node.lineno)
        if isinstance(node, ast.Import) and any(a.name == 'prism_nb' for a in node.names):
            found.append(node.lineno)
    return found


def test_no_module_imports_the_package_back():
    modules = [p for p in (ROOT / 'prism_nb').glob('*.py') if p.name not in ('__init__.py', '_modidx.py')]
    back = {p.name: lines for p in modules if (lines := imports_of_the_package(p.read_text()))}
    assert not back, f'modules importing prism_nb itself (its __init__ imports the tasks, which import them): {back}'
    assert 'experiment.py' in {p.name for p in modules}
    sample = 'from prism_nb import __version__\nfrom . import x\nimport prism_nb\nfrom .core import y\nimport prism_nb.core'
    assert imports_of_the_package(sample) == [1, 2, 3]  # what the check counts as importing the package back


def test_the_record_holds_the_packages_version():
    import prism_nb
    from prism_nb.experiment import versions
    assert versions()['prism_nb'] == prism_nb.__version__


def package_metadata(setup_dir: Path, out: Path) -> str:
    "The PKG-INFO that setup.py in `setup_dir` writes (what `pip show` reads once installed), built into `out`."
    subprocess.run([sys.executable, 'setup.py', '-q', 'egg_info', '--egg-base', str(out)], cwd=setup_dir, check=True,
                   capture_output=True)
    return (out / 'prism_nb.egg-info' / 'PKG-INFO').read_text()


def test_the_package_metadata_names_no_placeholder(tmp_path):
    info = package_metadata(ROOT, tmp_path)
    assert info.startswith('Metadata-Version') and 'Name: prism_nb' in info, info[:500]
    # settings.ini's git_url and author_email are nbdev's template values: no such repository, no such mailbox
    pointers = [x for x in info.splitlines() if x.startswith(('Home-page', 'Project-URL', 'Download-URL', 'Author-email'))]
    assert not pointers, pointers
    assert 'github.com/prism-nb' not in info and 'users.noreply.github.com' not in info


STUDY_PAGES = ['18_paper_severity', '20_tuning', '21_bunching', '21a_mend', '22_verdict']
TEST_CALL = re.compile(r'^\s*assert\b|\btest_(?:eq|ne|fail|close|is|warns|stdout|eq_type)\(', re.M)


def site_code_cells(nb: dict) -> list:
    "The sources of the code cells the docs site shows: not `#| hide`, export, exporti, default_exp or include: false."
    def directives(src):
        return [ln[3:].strip() for ln in src.splitlines() if ln.startswith('#|')]
    left_out = ('hide', 'export', 'exporti', 'default_exp', 'include: false')
    return [src for c in nb['cells'] if c['cell_type'] == 'code' for src in [''.join(c['source'])]
            if not any(d.startswith(left_out) for d in directives(src))]


@pytest.mark.parametrize('name', STUDY_PAGES)
def test_a_study_page_shows_no_test_cell_on_the_site(name):
    nb = json.loads((ROOT / 'nbs' / f'{name}.ipynb').read_text())
    shown = [src for src in site_code_cells(nb) if TEST_CALL.search(src)]
    assert not shown, f'nbs/{name}.ipynb shows tests on the site (move them to a `#| hide` cell after):\n' + '\n---\n'.join(shown)
    hidden = [src for c in nb['cells'] if c['cell_type'] == 'code' for src in [''.join(c['source'])]
              if src.startswith('#| hide') and TEST_CALL.search(src)]
    assert hidden and not any('#| eval: false' in src for src in hidden)  # its tests are still there, and nbdev_test runs them
    assert site_code_cells({'cells': [{'cell_type': 'code', 'source': s} for s in ('#| hide\nx', '#| export\ny', 'z')]}) == ['z']

