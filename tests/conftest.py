import os, re, subprocess
from concurrent.futures import Future
from pathlib import Path
import pytest


class RecordingExecutor:
    "A sweep executor keeping the commands it is given, each reported done without running."

    def __init__(self):
        self.cmds = []

    def submit(self, fn, cmd, *args):
        self.cmds.append(cmd)
        f = Future()
        f.set_result((0, ''))
        return f

ROOT = Path(__file__).resolve().parent.parent


def scratch_notebooks(root: Path = ROOT) -> list:
    "Notebooks in root/nbs that are not the project's: neither listed in nbs/sidebar.yml nor tracked by git."
    nbs = root / 'nbs'
    sidebar = nbs / 'sidebar.yml'
    listed = set(re.findall(r'[^\s\'"]+\.ipynb', sidebar.read_text())) if sidebar.exists() else set()
    try:  # committed notebooks count as the project's even before the sidebar lists them
        git = subprocess.run(['git', 'ls-files', '--', 'nbs/*.ipynb'], cwd=root, capture_output=True, text=True)
        tracked = {Path(p).name for p in git.stdout.split()} if git.returncode == 0 else set()
    except OSError:
        tracked = set()
    return sorted(p.name for p in nbs.glob('*.ipynb') if p.name not in listed | tracked)


def scratch_message(names: list) -> str:
    "One line naming the scratch notebooks and what to do with them."
    return (f"nbs/ holds {', '.join(names)}, not the project's (neither in nbs/sidebar.yml nor committed): the README's "
            "notebook list, the docs build and the tests read every notebook in nbs/, so move a scratch notebook out "
            "of nbs/ (e.g. to .scratch/ at the repository root, which git ignores), or list a new one in nbs/sidebar.yml")


def pytest_configure(config):
    # a scratch notebook (JupyterLab's File > New saves Untitled.ipynb in nbs/) is named at once, not met deep in a test
    found = scratch_notebooks()
    if found:
        raise pytest.UsageError(scratch_message(found))
    # tests read the real data; CI points PRISM_DATA at ../shared/data
    if not os.environ.get('PRISM_DATA') and (ROOT.parent / 'shared' / 'data').exists():
        os.environ['PRISM_DATA'] = str(ROOT.parent / 'shared' / 'data')
    os.environ.setdefault('MPLBACKEND', 'Agg')

@pytest.fixture
def root(): return ROOT

@pytest.fixture(scope='module')
def train_quick(tmp_path_factory):
    "A function training one quick config into its own results folder: (results folder, record, record path)."
    from prism_nb.experiment import run
    from prism_nb.config import make_config, record_path
    def train(quick: dict) -> tuple:
        results = tmp_path_factory.mktemp('trained') / 'results'
        rec = run(quick, results_dir=results, progress=False)
        return results, rec, record_path(make_config(**quick), results)
    return train
