"""End-to-end runs of nbs/run_realworld.ipynb through papermill on the eICU demo: a record with the held-out
domain's AUROC/AUPRC, skipped on rerun, and bad names failing at once."""
import json, subprocess, sys
import pytest

TINY = dict(dataset='eicu_demo', target='West', epochs=2, patience=2)

def papermill(root, out, results, **params):
    cmd = [sys.executable, '-m', 'papermill', str(root / 'nbs' / 'run_realworld.ipynb'), str(out), '--cwd', str(root / 'nbs'),
           '-p', 'results_dir', str(results)]
    for k, v in {**TINY, **params}.items(): cmd += ['-p', k, str(v)]
    return cmd

def records(results): return sorted(results.glob('realworld/*/*.json'))

@pytest.mark.parametrize('method', ['erm', 'prism'])
def test_run_writes_record_then_skips(root, tmp_path, method):
    results = tmp_path / 'results'
    extra = dict(pretrain_epochs=1, epochs=1) if method == 'prism' else {}
    subprocess.run(papermill(root, tmp_path / 'a.ipynb', results, method=method, **extra), check=True, capture_output=True)
    recs = records(results)
    assert len(recs) == 1 and recs[0].parent.name == 'eicu_demo'
    rec = json.loads(recs[0].read_text())
    assert rec['config']['method'] == method and rec['config']['target'] == 'West'
    assert rec['data']['test'] == dict(stays=305, positives=15)
    assert set(rec['metrics']) == {'auroc', 'auprc'} and all(0 <= v <= 100 for v in rec['metrics'].values())
    mtime = recs[0].stat().st_mtime_ns
    subprocess.run(papermill(root, tmp_path / 'b.ipynb', results, method=method, **extra), check=True, capture_output=True)
    assert recs[0].stat().st_mtime_ns == mtime and 'skipped' in (tmp_path / 'b.ipynb').read_text()

@pytest.mark.parametrize('param,value,msg', [('dataset', 'mimic', 'eicu_demo, p12, p19'), ('target', 'Europe', 'unknown target'),
                                             ('method', 'nope', 'valid methods')])
def test_unknown_names_fail_fast(root, tmp_path, param, value, msg):
    res = subprocess.run(papermill(root, tmp_path / 'x.ipynb', tmp_path / 'r', **{param: value}), capture_output=True, text=True)
    assert res.returncode != 0
    assert msg in res.stdout + res.stderr + (tmp_path / 'x.ipynb').read_text()
    assert not records(tmp_path / 'r')
