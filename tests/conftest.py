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
