"""Opening, running and saving a notebook in JupyterLab leaves it as committed. JupyterLab saves through
jupyter_server's FileContentsManager; `nbdev_install_hooks` makes nbdev's `clean_jupyter` its pre-save hook, and
`jupyter_hooks = True` in settings.ini turns the cleaning on. Here a save is that save: the hook configured by the
very file `nbdev_install_hooks` writes, the committed notebook as a kernel leaves it (`metadata.language_info`,
the kernelspec JupyterLab writes, an execution count on every code cell, those whose committed outputs are empty
included), saved into a copy of the notebook beside the repository's settings.ini."""
import copy, json, shutil
from pathlib import Path
import pytest
from jupyter_server.services.contents.filemanager import FileContentsManager
from nbdev.clean import _add_jupyter_hooks
from traitlets.config.loader import PyFileConfigLoader

pytestmark = pytest.mark.filterwarnings("ignore:Overriding existing pre_save_hook")  # traitlets, on the configured hook

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted(p.name for p in (ROOT / 'nbs').glob('*.ipynb'))
LANGUAGE_INFO = {'codemirror_mode': {'name': 'ipython', 'version': 3}, 'file_extension': '.py', 'mimetype': 'text/x-python',
                 'name': 'python', 'nbconvert_exporter': 'python', 'pygments_lexer': 'ipython3', 'version': '3.11.7'}

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
    return nb

@pytest.fixture
def repo(tmp_path, monkeypatch):
    "A folder with the repository's settings.ini and an nbs/, JupyterLab's working directory; Jupyter's folders beside."
    (tmp_path / 'repo' / 'nbs').mkdir(parents=True)
    shutil.copy(ROOT / 'settings.ini', tmp_path / 'repo')
    monkeypatch.chdir(tmp_path / 'repo')  # the hook looks for settings.ini from the notebook's path, relative to the server's
    monkeypatch.setenv('JUPYTER_DATA_DIR', str(tmp_path / 'data'))  # nbdev's hook signs (trusts) the notebook there
    return tmp_path

def save(repo: Path, name: str, hook: bool) -> str:
    "Save the committed notebook the way JupyterLab does, through the contents manager, with or without nbdev's hook."
    shutil.copy(ROOT / 'nbs' / name, repo / 'repo' / 'nbs')
    config = None
    if hook:
        cfg_file = repo / 'jupyter' / 'jupyter_server_config.py'
        cfg_file.parent.mkdir(exist_ok=True)
        cfg_file.write_text(_add_jupyter_hooks('', cfg_file))  # what nbdev_install_hooks adds to ~/.jupyter
        config = PyFileConfigLoader(cfg_file.name, str(cfg_file.parent)).load_config()
    cm = FileContentsManager(root_dir=str(repo / 'repo'), **({'config': config} if config else {}))
    nb = as_a_kernel_leaves_it(json.loads((ROOT / 'nbs' / name).read_text()))
    cm.save({'type': 'notebook', 'format': 'json', 'content': nb}, f'nbs/{name}')
    return (repo / 'repo' / 'nbs' / name).read_text()

@pytest.mark.parametrize('name', NOTEBOOKS)
def test_a_jupyterlab_save_leaves_the_notebook_as_committed(repo, name):
    assert save(repo, name, hook=True) == (ROOT / 'nbs' / name).read_text(), \
        f'saving {name} in JupyterLab changes it: run nbdev_clean (and check jupyter_hooks = True in settings.ini)'

def test_without_the_hook_the_same_save_changes_the_notebook(repo):
    "The save above is one that dirties a notebook: without nbdev's hook it keeps language_info and execution counts."
    saved = json.loads(save(repo, 'paper.ipynb', hook=False))
    assert saved['metadata']['language_info'] == LANGUAGE_INFO
    assert saved != json.loads((ROOT / 'nbs' / 'paper.ipynb').read_text())
