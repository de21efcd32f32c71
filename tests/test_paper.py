"""paper.ipynb renders every artefact from records; missing runs show as missing, never as zeros."""
import subprocess, sys
import pandas as pd
from prism_nb.experiment import run

def test_paper_with_no_records(root, tmp_path):
    "A results folder whose one record (64 windows, 1 epoch) no table asks for: every table says '—', nothing is zero."
    run(dict(method='erm', max_windows=64, epochs=1), results_dir=tmp_path / 'empty', progress=False)  # an empty folder is refused (test_faults)
    out = tmp_path / 'paper.ipynb'
    cmd = [sys.executable, '-m', 'papermill', str(root / 'nbs' / 'paper.ipynb'), str(out), '--cwd', str(root / 'nbs'),
           '-p', 'results_dir', str(tmp_path / 'empty'), '-p', 'tables_dir', str(tmp_path / 'tables'), '-p', 'figures_dir', str(tmp_path / 'figures')]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    for name in ['harc_sample_masks', 'harc_construction']:
        for ext in ['pdf', 'png']: assert (tmp_path / 'figures' / f'{name}.{ext}').stat().st_size > 1000
    harc = pd.read_csv(tmp_path / 'tables' / 'harc.csv', index_col=0)
    assert len(harc) >= 2 and (harc.drop(columns='seeds') == '—').all().all() and (harc['seeds'] == 0).all()
    stats = pd.read_csv(tmp_path / 'tables' / 'dataset-statistics.csv', index_col=0)
    assert int(stats.loc['Total', 'HAR-C']) == 10411
    twin = pd.read_csv(tmp_path / 'tables' / 'harc_vs_paper_long.csv')
    assert twin['ours'].isna().all() and twin['paper'].notna().any()
