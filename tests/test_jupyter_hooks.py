"""Opening, running and saving a notebook in JupyterLab leaves it as committed. JupyterLab saves through
jupyter_server's FileContentsManager; `python -m prism_nb.jupyter install` makes prism_nb's `clean_jupyter` its
pre-save hook (nbdev's `clean_jupyter`, and what tools/render_outputs.py leaves out: the outputs of `#| output: false`
cells and of the cells nbdev_test skips, stderr), and `jupyter_hooks = True` in settings.ini turns the cleaning on.

- Always (seconds): a save is that save, the hook configured by the very file the installer writes, every notebook
  as a kernel leaves it after running it to the outputs committed (`metadata.language_info`, the kernelspec
  JupyterLab writes, execution counts, stdout in pieces, stderr, outputs in `#| output: false` cells and in the cells
  nbdev_test skips), saved into a copy of the notebook beside the repository's settings.ini; without the hook the same
  save changes the notebook. The contents manager made from the installed config gives no "Overriding existing
  pre_save_hook" warning (jupyter_server 2 gave it at every start for a hook set once, in one file: issue 44).
- With PRISM_LAB_CHECK=1 (minutes; the repository has no `slow` pytest marker): every library notebook really
  executed in ipykernel by nbclient (all cells, as JupyterLab's Run All) and saved through the hook is its committed
  file byte for byte; and the user's own round trip: a real `jupyter lab` server with the hook installed by the
  installer into a temporary Jupyter config folder, headless Chromium (Debian's chromium and chromium-driver, driven
  as tools/check_docs.py drives it) opening a copy of nbs/02_sampling.ipynb (a figure, `#| output: false` cells,
  show_doc), Run All, Save: the saved file is the committed one; with `jupyter_hooks = False` the same save is not.
  And a real `jupyter lab` started with the installer's config (seconds, no browser): its log has no "Overriding
  existing pre_save_hook" (with the hook the earlier installer wrote into both config files, it has), and a save
  through its contents API is cleaned by the hook.
  These compare with the committed outputs, so they pass once tools/render_outputs.py has rendered them."""
import copy, json, os, shutil, subprocess, sys, time, urllib.request, warnings
from pathlib import Path
import pytest
from jupyter_server.services.contents.filemanager import FileContentsManager
from traitlets.config.loader import PyFileConfigLoader
from prism_nb.jupyter import _hook_source_v1, hides_output, install_hook, skipped

OVERRIDING = 'Overriding existing pre_save_hook'  # jupyter_server 2, at every start, for a hook set once (issue 44)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'tools'))
from render_outputs import library_notebooks  # noqa: E402

NOTEBOOKS = sorted(p.name for p in (ROOT / 'nbs').glob('*.ipynb'))
LIBRARY = [p.name for p in library_notebooks()]
LAB_CHECK = pytest.mark.skipif(os.environ.get('PRISM_LAB_CHECK') != '1',
                               reason='minutes: set PRISM_LAB_CHECK=1 to run notebooks in ipykernel and JupyterLab')
LAB_NOTEBOOK = '02_sampling.ipynb'  # a figure, `#| output: false` cells and show_doc, about a minute to run
LANGUAGE_INFO = {'codemirror_mode': {'name': 'ipython', 'version': 3}, 'file_extension': '.py', 'mimetype': 'text/x-python',
                 'name': 'python', 'nbconvert_exporter': 'python', 'pygments_lexer': 'ipython3', 'version': '3.11.7'}

def stream(name, text): return {'name': name, 'output_type': 'stream', 'text': text}

def as_a_kernel_leaves_it(nb: dict) -> dict:
    "The notebook after JupyterLab opened it, started ipykernel and ran every cell to the outputs committed."
    nb = copy.deepcopy(nb)
    nb['metadata']['kernelspec'] = {'display_name': 'Python 3 (ipykernel)', 'language': 'python', 'name': 'python3'}
    nb['metadata']['language_info'] = LANGUAGE_INFO
    code = [c for c in nb['cells'] if c['cell_type'] == 'code']
    assert any(not c['outputs'] for c in code), 'the notebook should have a code cell whose committed outputs are empty'
    for n, c in enumerate(code, 1):
        c['execution_count'] = n
        for o in c['outputs']:
            if o['output_type'] == 'execute_result': o['execution_count'] = n
        if hides_output(c) or skipped(c): c['outputs'] = [stream('stdout', f'took {n / 7:.3f} s in /tmp/tmpab12cd\n')]
        # printing arrives in pieces, with progress bars and warnings on stderr between them
        printed = [i for i, o in enumerate(c['outputs']) if o['output_type'] == 'stream']
        if printed and not (hides_output(c) or skipped(c)):
            i = printed[0]
            text = ''.join(c['outputs'][i]['text'])
            c['outputs'][i:i + 1] = [stream('stdout', text[:len(text) // 2]), stream('stderr', '10%|#    | 1/10\n'),
                                     stream('stdout', text[len(text) // 2:])]
        elif c['outputs']: c['outputs'].insert(0, stream('stderr', 'UserWarning: careful\n'))
    return nb

def hook_config(folder: Path):
    "The Jupyter config `python -m prism_nb.jupyter install` writes into `folder`, as jupyter_server loads it."
    install_hook(folder)
    return PyFileConfigLoader('jupyter_server_config.py', str(folder)).load_config()

@pytest.fixture
def repo(tmp_path, monkeypatch):
    "A folder with the repository's settings.ini and an nbs/, JupyterLab's root; Jupyter's folders beside."
    (tmp_path / 'repo' / 'nbs').mkdir(parents=True)
    shutil.copy(ROOT / 'settings.ini', tmp_path / 'repo')
    monkeypatch.chdir(tmp_path)  # the hook finds settings.ini from the notebook, wherever the server was started
    monkeypatch.setenv('JUPYTER_DATA_DIR', str(tmp_path / 'data'))  # nbdev's hook signs (trusts) the notebook there
    return tmp_path

def save(repo: Path, name: str, nb: dict, hook: bool) -> str:
    "Save `nb` as `name` the way JupyterLab does, through the contents manager, with or without prism_nb's hook."
    shutil.copy(ROOT / 'nbs' / name, repo / 'repo' / 'nbs')
    config = {'config': hook_config(repo / 'jupyter')} if hook else {}
    cm = FileContentsManager(root_dir=str(repo / 'repo'), **config)
    cm.save({'type': 'notebook', 'format': 'json', 'content': nb}, f'nbs/{name}')
    return (repo / 'repo' / 'nbs' / name).read_text()

def committed(name: str) -> dict: return json.loads((ROOT / 'nbs' / name).read_text())

@pytest.mark.parametrize('name', NOTEBOOKS)
def test_a_jupyterlab_save_leaves_the_notebook_as_committed(repo, name):
    assert save(repo, name, as_a_kernel_leaves_it(committed(name)), hook=True) == (ROOT / 'nbs' / name).read_text(), \
        f'saving {name} in JupyterLab changes it: run tools/render_outputs.py and nbdev_clean (and check ' \
        'jupyter_hooks = True in settings.ini)'

def test_without_the_hook_the_same_save_changes_the_notebook(repo):
    "The save above is one that dirties a notebook: without the hook it keeps language_info, counts and outputs."
    saved = json.loads(save(repo, LAB_NOTEBOOK, as_a_kernel_leaves_it(committed(LAB_NOTEBOOK)), hook=False))
    assert saved['metadata']['language_info'] == LANGUAGE_INFO
    hidden = [c for c in saved['cells'] if c['cell_type'] == 'code' and hides_output(c)]
    assert hidden and all(c['outputs'] for c in hidden)
    assert saved != committed(LAB_NOTEBOOK)

def test_the_installed_hook_starts_without_a_warning(repo):
    "The contents manager made from the installed config, as the server makes it at every start, warns of nothing."
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter('always')
        FileContentsManager(config=hook_config(repo / 'jupyter'))
    assert not [str(w.message) for w in said if OVERRIDING in str(w.message)]

@pytest.mark.filterwarnings(f'ignore:{OVERRIDING}')  # nbdev's hook, set by config: jupyter_server 2 warns
def test_nbdevs_hook_alone_keeps_what_the_render_leaves_out(repo):
    "nbdev_install_hooks' hook cleans counts and metadata but saves `#| output: false` outputs and stderr."
    from nbdev.clean import _add_jupyter_hooks
    cfg = repo / 'nbdev_jupyter' / 'jupyter_server_config.py'
    cfg.parent.mkdir()
    cfg.write_text(_add_jupyter_hooks('', cfg))
    shutil.copy(ROOT / 'nbs' / LAB_NOTEBOOK, repo / 'repo' / 'nbs')
    os.chdir(repo / 'repo')  # nbdev's hook finds settings.ini from the server's working folder
    cm = FileContentsManager(root_dir=str(repo / 'repo'), config=PyFileConfigLoader(cfg.name, str(cfg.parent)).load_config())
    cm.save({'type': 'notebook', 'format': 'json', 'content': as_a_kernel_leaves_it(committed(LAB_NOTEBOOK))},
            f'nbs/{LAB_NOTEBOOK}')
    saved = json.loads((repo / 'repo' / 'nbs' / LAB_NOTEBOOK).read_text())
    assert 'language_info' not in saved['metadata'] and saved != committed(LAB_NOTEBOOK)
    assert any(c['outputs'] for c in saved['cells'] if c['cell_type'] == 'code' and hides_output(c))

# ---------------------------------------------------------------- executed for real (PRISM_LAB_CHECK=1)

def kernel_env(repo: Path) -> dict:
    "The environment of a JupyterLab started by a user: no MPLBACKEND (conftest sets Agg), Jupyter's folders apart."
    env = {k: v for k, v in os.environ.items() if k != 'MPLBACKEND' and not k.startswith('JUPYTER')}
    env.update(JUPYTER_CONFIG_DIR=str(repo / 'jupyter'), JUPYTER_DATA_DIR=str(repo / 'data'),
               JUPYTER_RUNTIME_DIR=str(repo / 'runtime'), JUPYTERLAB_SETTINGS_DIR=str(repo / 'lab' / 'settings'),
               JUPYTERLAB_WORKSPACES_DIR=str(repo / 'lab' / 'workspaces'))
    return env

@LAB_CHECK
@pytest.mark.parametrize('name', LIBRARY)
def test_a_notebook_run_in_ipykernel_and_saved_is_committed(repo, monkeypatch, name):
    "Every library notebook executed by nbclient as JupyterLab's Run All does (every cell), saved through the hook."
    import nbformat
    from nbclient import NotebookClient
    for k, v in kernel_env(repo).items(): monkeypatch.setenv(k, v)
    monkeypatch.delenv('MPLBACKEND', raising=False)
    shutil.copy(ROOT / 'nbs' / name, repo / 'repo' / 'nbs')
    nb = nbformat.read(repo / 'repo' / 'nbs' / name, as_version=4)
    start = time.time()
    NotebookClient(nb, timeout=1800, kernel_name='python3', resources={'metadata': {'path': str(repo / 'repo' / 'nbs')}}).execute()
    print(f'{name}: executed in {time.time() - start:.0f} s')
    saved = save(repo, name, json.loads(nbformat.writes(nb)), hook=True)
    assert saved == (ROOT / 'nbs' / name).read_text(), f'{name} run in ipykernel and saved is not as committed: ' \
        f'python tools/render_outputs.py {name} && nbdev_clean'

def wait_for(what: str, check, seconds: float, every: float = 0.5):
    "Call `check` until it returns something true, at most `seconds`: that value."
    end = time.time() + seconds
    while time.time() < end:
        res = check()
        if res: return res
        time.sleep(every)
    raise TimeoutError(f'{what}: not after {seconds:.0f} s')

# JupyterLab's application object (window.jupyterapp, with --LabApp.expose_app_in_browser) runs its commands on the
# current widget; the notebook's panel is found among the main area's, and made current by a click on its first cell
PANEL_JS = """const app = window.jupyterapp;
const w = app && Array.from(app.shell.widgets('main')).find(w => w.context && w.context.path === '%s');
const k = w && w.context.isReady && w.sessionContext.session && w.sessionContext.session.kernel;
return k ? [k.status, app.shell.currentWidget === w] : null;"""
# show_doc outputs as JupyterLab shows them: how many have a link called source, how many show Quarto's `{target=`
SHOW_DOC_JS = """const md = Array.from(document.querySelectorAll('.jp-OutputArea .jp-RenderedMarkdown'));
return [md.filter(e => Array.from(e.querySelectorAll('a')).some(a => a.textContent === 'source')).length,
        md.filter(e => e.textContent.includes('{target=')).length];"""
COMMAND_JS = """window.prismDone = null;
window.jupyterapp.commands.execute('%s').then(() => { window.prismDone = 'ok'; },
                                             e => { window.prismDone = 'failed: ' + e; });"""

def lab_round_trip(repo: Path, notebook: Path, hook_on: bool) -> tuple:
    "Open a copy of `notebook` in JupyterLab in Chromium, Run All, Save: (saved text, seconds)."
    from check_docs import WebDriver, free_port
    chromium = os.environ.get('CHROMIUM', shutil.which('chromium') or '/usr/bin/chromium')
    chromedriver = os.environ.get('CHROMEDRIVER', shutil.which('chromedriver') or '/usr/bin/chromedriver')
    if not (Path(chromium).exists() and Path(chromedriver).exists()):
        pytest.skip('needs chromium and chromedriver: apt-get install -y chromium chromium-driver')
    name = notebook.name
    shutil.copy(notebook, repo / 'repo' / 'nbs')
    settings = repo / 'repo' / 'settings.ini'
    if not hook_on: settings.write_text(settings.read_text().replace('jupyter_hooks = True', 'jupyter_hooks = False'))
    done = subprocess.run([sys.executable, '-m', 'prism_nb.jupyter', 'install', '--config_dir', str(repo / 'jupyter')],
                          capture_output=True, text=True, check=True)  # the installer, as a user runs it
    assert f"{repo / 'jupyter' / 'jupyter_server_config.py'}: added" in done.stdout, done.stdout
    port, token = free_port(), 'prism-lab-check'
    log = (repo / 'lab.log').open('w')
    lab = subprocess.Popen([sys.executable, '-m', 'jupyter', 'lab', '--no-browser', f'--port={port}', '--ip=127.0.0.1',
                            f'--IdentityProvider.token={token}', f'--ServerApp.root_dir={repo / "repo"}', '--allow-root',
                            '--LabApp.expose_app_in_browser=True', '--ServerApp.open_browser=False'],
                           cwd=repo, env=kernel_env(repo), stdout=log, stderr=subprocess.STDOUT)
    start, wd = time.time(), None
    try:
        base = f'http://127.0.0.1:{port}'
        def up():
            if lab.poll() is not None: raise RuntimeError(f'jupyter lab ended: {(repo / "lab.log").read_text()[-2000:]}')
            try: return urllib.request.urlopen(f'{base}/api/status?token={token}', timeout=5).status == 200
            except OSError: return False
        wait_for('jupyter lab answering', up, 120)
        wd = WebDriver(chromium, chromedriver, str(repo / 'chromium-profile'))
        wd.get(f'{base}/lab/tree/nbs/{name}?token={token}&reset')
        panel = lambda: wd.js(PANEL_JS % f'nbs/{name}') or ['', False]
        wait_for('the notebook open, its kernel idle', lambda: panel()[0] == 'idle', 180)
        cell = wd.session('POST', '/element', {'using': 'css selector', 'value': '.jp-NotebookPanel .jp-Cell'})
        wd.session('POST', f'/element/{next(iter(cell.values()))}/click', {})
        wait_for('the notebook current', lambda: panel()[1], 30)
        wd.js(COMMAND_JS % 'notebook:run-all-cells')
        assert wait_for('Run All', lambda: wd.js('return window.prismDone;'), 1200, 1) == 'ok'
        wait_for('the kernel idle after Run All', lambda: panel()[0] == 'idle', 120)
        time.sleep(2)  # outputs still on their way
        links, raw = wd.js(SHOW_DOC_JS)
        assert links and not raw, f'show_doc in JupyterLab: {links} source links, {raw} outputs showing {{target='
        wd.js(COMMAND_JS % 'docmanager:save')
        assert wait_for('Save', lambda: wd.js('return window.prismDone;'), 120) == 'ok'
        return (repo / 'repo' / 'nbs' / name).read_text(), time.time() - start
    finally:
        if wd: wd.close()
        lab.terminate()
        try: lab.wait(20)
        except subprocess.TimeoutExpired: lab.kill()
        log.close()

@LAB_CHECK
@pytest.mark.parametrize('hook_on', [True, False], ids=['hook', 'no-hook'])
def test_run_all_and_save_in_jupyterlab_leaves_the_notebook_as_committed(repo, hook_on):
    "The user's round trip in a real JupyterLab and browser; with `jupyter_hooks = False` it does change the file."
    saved, seconds = lab_round_trip(repo, ROOT / 'nbs' / LAB_NOTEBOOK, hook_on)
    print(f'{LAB_NOTEBOOK}: opened, run and saved in JupyterLab in {seconds:.0f} s')
    same = saved == (ROOT / 'nbs' / LAB_NOTEBOOK).read_text()
    if not hook_on:
        assert not same, 'without the hook the save should change the notebook: this test would not see a broken hook'
        return
    if not same:
        shutil.copy(repo / 'repo' / 'nbs' / LAB_NOTEBOOK, repo / f'saved_{LAB_NOTEBOOK}')
        diff = subprocess.run(['git', 'diff', '--no-index', '--stat', str(ROOT / 'nbs' / LAB_NOTEBOOK),
                               str(repo / f'saved_{LAB_NOTEBOOK}')], capture_output=True, text=True).stdout
        pytest.fail(f'JupyterLab Run All + Save changed {LAB_NOTEBOOK}: {diff} (saved copy: {repo}/saved_{LAB_NOTEBOOK})')

@LAB_CHECK
@pytest.mark.parametrize('hook', ['installed', 'earlier'])
def test_jupyterlab_starts_without_a_warning_and_saves_through_the_hook(repo, hook):
    """A real `jupyter lab` with the installer's config: no warning in its log, and a save is cleaned; with the hook as
    the earlier installer wrote it (into both config files), the log has the warning, so this test would see it."""
    from check_docs import free_port
    cfg = repo / 'jupyter'
    subprocess.run([sys.executable, '-m', 'prism_nb.jupyter', 'install', '--config_dir', str(cfg)],
                   capture_output=True, text=True, check=True)  # the installer, as a user runs it
    if hook == 'earlier':
        for name in ('jupyter_server_config.py', 'jupyter_notebook_config.py'):
            (cfg / name).write_text(_hook_source_v1 + '\n')
    port, token = free_port(), 'prism-lab-check'
    base, auth = f'http://127.0.0.1:{port}', {'Authorization': f'token {token}'}
    nb = {'nbformat': 4, 'nbformat_minor': 5, 'metadata': {'language_info': {'name': 'python'}}, 'cells': [
        {'cell_type': 'code', 'id': 'a1', 'metadata': {}, 'execution_count': 1, 'source': '#| output: false\nprint(1)',
         'outputs': [stream('stdout', '1\n')]},
        {'cell_type': 'code', 'id': 'b2', 'metadata': {}, 'execution_count': 2, 'source': 'print(2)',
         'outputs': [stream('stdout', '2\n'), stream('stderr', 'careful\n')]}]}
    # a notebook opened and saved: nbdev's hook trusts the file there before the save, and fails on a new one
    (repo / 'repo' / 'nbs' / 'x.ipynb').write_text(json.dumps(nb))
    log_path = repo / 'lab.log'
    with log_path.open('w') as log:
        lab = subprocess.Popen([sys.executable, '-m', 'jupyter', 'lab', '--no-browser', f'--port={port}',
                                '--ip=127.0.0.1', f'--IdentityProvider.token={token}',
                                f'--ServerApp.root_dir={repo / "repo"}', '--allow-root'],
                               cwd=repo, env=kernel_env(repo), stdout=log, stderr=subprocess.STDOUT)
    try:
        def up():
            if lab.poll() is not None: raise RuntimeError(f'jupyter lab ended: {log_path.read_text()[-2000:]}')
            status = urllib.request.Request(f'{base}/api/status', headers=auth)
            try: return urllib.request.urlopen(status, timeout=5).status == 200
            except OSError: return False
        wait_for('jupyter lab answering', up, 120)
        body = json.dumps({'type': 'notebook', 'format': 'json', 'content': nb}).encode()
        put = urllib.request.Request(f'{base}/api/contents/nbs/x.ipynb', data=body, method='PUT',
                                     headers={**auth, 'Content-Type': 'application/json'})
        assert urllib.request.urlopen(put, timeout=120).status in (200, 201)  # the first save imports prism_nb
    finally:
        lab.terminate()
        try: lab.wait(20)
        except subprocess.TimeoutExpired: lab.kill()
    said = [line for line in log_path.read_text().splitlines() if OVERRIDING in line]
    if hook == 'installed': assert not said, f'jupyter lab with the installed hook says: {said}'
    else: assert said, 'the earlier hook should draw the warning: this test would not see it come back'
    saved = json.loads((repo / 'repo' / 'nbs' / 'x.ipynb').read_text())
    outputs = [[(o['name'], ''.join(o['text'])) for o in c['outputs']] for c in saved['cells']]
    assert outputs == [[], [('stdout', '2\n')]], saved  # `#| output: false` and stderr emptied: our hook ran
    assert [c['execution_count'] for c in saved['cells']] == [None, None] and 'language_info' not in saved['metadata']


OTHER_HOOKS = {  # another tool's hook, as it may stand in Jupyter's config (issue 61): file -> text
    'subclass': ('jupyter_server_config.py', "c.AsyncLargeFileManager.pre_save_hook = 'scrub.hook'\n"),
    'item': ('jupyter_server_config.py', "c['ContentsManager']['pre_save_hook'] = 'scrub.hook'\n"),
    'update': ('jupyter_server_config.py', "c.FileContentsManager.update(pre_save_hook='scrub.hook')\n"),
    'after ours': ('jupyter_server_config.py', None),  # our hook installed, another set after it
    'json': ('jupyter_server_config.json', '{"ContentsManager": {"pre_save_hook": "scrub.hook"}}'),
    'extension': ('jupyter_server_config.d/scrub.json', '{"FileContentsManager": {"pre_save_hook": "scrub.hook"}}'),
}


@pytest.mark.parametrize('form', OTHER_HOOKS)
def test_another_tools_hook_is_named_and_left_alone(tmp_path, form):
    """A server runs one pre-save hook: with another tool's in the config, ours would replace it or lose to it, and
    neither may happen unsaid. The installer changes nothing and names the other hook and where it is set."""
    name, text = OTHER_HOOKS[form]
    if text is None:
        install_hook(tmp_path)
        text = (tmp_path / name).read_text() + "c.ContentsManager.pre_save_hook = 'scrub.hook'\n"
    (tmp_path / name).parent.mkdir(exist_ok=True)
    (tmp_path / name).write_text(text)
    before = {p: p.read_bytes() for p in tmp_path.rglob('*') if p.is_file()}
    (what,) = install_hook(tmp_path).values()
    assert what.startswith("NOT changed: Jupyter's config sets another pre_save_hook ("), what
    assert "'scrub.hook'" in what and 'take that setting out and install again' in what, what
    assert (f'{name}: ' if name.endswith('.json') else 'line ') in what, what
    assert {p: p.read_bytes() for p in tmp_path.rglob('*') if p.is_file()} == before


def test_the_installer_names_another_hook_and_fails(tmp_path):
    (tmp_path / 'jupyter_server_config.py').write_text("c.AsyncLargeFileManager.pre_save_hook = 'scrub.hook'\n")
    done = subprocess.run([sys.executable, '-m', 'prism_nb.jupyter', 'install', '--config_dir', str(tmp_path)],
                          capture_output=True, text=True)
    assert done.returncode == 1
    assert ("jupyter_server_config.py: NOT changed: Jupyter's config sets another pre_save_hook (line 1: "
            "c.AsyncLargeFileManager.pre_save_hook = 'scrub.hook')") in done.stdout, done.stdout
