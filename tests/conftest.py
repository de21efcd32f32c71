import os
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent

def pytest_configure(config):
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
