"""The coverage map covers every fig:/tab: label of the paper and names only files that exist."""
from pathlib import Path
import pandas as pd
import pytest
from prism_nb.ledger import coverage_table, paper_labels
from prism_nb.report import paper_dir

def test_coverage_map_covers_the_paper(root):
    if not (paper_dir() / 'paper.tex').exists(): pytest.skip('the paper source is not beside the repository')
    cov = coverage_table()
    missing = sorted(set(paper_labels()) - set(cov.label))
    assert not missing, f'labels of the paper missing from report.COVERAGE: {missing}'
    assert not sorted(set(cov.label) - set(paper_labels())), 'the map names labels the paper does not have'

def test_coverage_files_exist(root):
    cov = coverage_table()
    absent = [f for files in cov.files for f in files.split() if not (root / f).exists()]
    assert not absent, f'files named by the coverage map do not exist: {absent}'
    assert (cov.files.str.len() > 0).sum() >= 10
    short = cov[cov.status != 'reproduced']
    assert (short.reason.str.len() > 10).all(), 'every status short of reproduced needs a reason'

def test_committed_coverage_table_matches_the_map(root):
    committed = pd.read_csv(root / 'tables' / 'coverage.csv', keep_default_na=False)
    pd.testing.assert_frame_equal(committed, coverage_table().astype(str), check_dtype=False)
