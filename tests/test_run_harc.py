"""End-to-end runs of nbs/run_harc.ipynb through papermill: a record with every condition, skip on rerun,
each line once in the terminal (with --log-output or not: the epoch lines, the skip, the closing line with the
score), fail fast on bad names, and no record left by a run killed mid-training."""
import json, os, re, signal, subprocess, sys, time
from pathlib import Path
import pytest

from prism_nb.sampling import HARC_CONDITIONS

TINY = dict(epochs=2, patience=2, max_windows=256, batch_size=64)
LONG = dict(method='erm', epochs=15, patience=15, max_windows=2000)  # seconds of training: killed 1 s in

def papermill(root, out, results, extra=(), **params):
    cmd = [sys.executable, '-m', 'papermill', str(root / 'nbs' / 'run_harc.ipynb'), str(out), '--cwd', str(root / 'nbs'),
           '-p', 'results_dir', str(results)]
    for k, v in {**TINY, **params}.items(): cmd += ['-p', k, str(v)]
    return cmd + list(extra)

def children(pid):
    "Pids of the processes whose parent is `pid` (Linux /proc)."
    out = []
    for p in Path('/proc').iterdir():
        if p.name.isdigit():
            try: stat = (p / 'stat').read_text()
            except OSError: continue
            if int(stat.rsplit(')', 1)[1].split()[1]) == pid: out.append(int(p.name))
    return out

def records(results): return sorted((results / 'harc').glob('*.json')) if (results / 'harc').exists() else []

def terminal(cmd) -> list:
    "The lines a papermill command shows in its terminal (stdout and stderr as one stream)."
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert res.returncode == 0, res.stdout[-3000:]
    return res.stdout.splitlines()

@pytest.fixture(scope='module')
def twice(tmp_path_factory):
    "One config run twice through papermill, first with --log-output (it trains), then without (it skips)."
    root, tmp = Path(__file__).resolve().parent.parent, tmp_path_factory.mktemp('twice')
    results = tmp / 'results'
    first = terminal(papermill(root, tmp / 'a.ipynb', results, extra=['--log-output'], method='erm'))
    mtime = [p.stat().st_mtime_ns for p in records(results)]
    second = terminal(papermill(root, tmp / 'b.ipynb', results, method='erm'))
    return dict(tmp=tmp, results=results, first=first, second=second, mtime=mtime)

def test_run_writes_record_then_skips(twice):
    recs = records(twice['results'])
    assert len(recs) == 1
    rec = json.loads(recs[0].read_text())
    assert sorted(rec['metrics']) == sorted(HARC_CONDITIONS)
    assert rec['config']['method'] == 'erm' and rec['data']['source'] == 'hapt' and rec['data']['fingerprint']
    assert [recs[0].stat().st_mtime_ns] == twice['mtime']
    assert 'skipped' in (twice['tmp'] / 'b.ipynb').read_text()

def test_the_terminal_shows_each_line_once(twice):
    "With --log-output the closing line (with the Avg.) once and the epoch lines one under the other; without it too."
    lines = twice['first']
    closing = [x for x in lines if 'prism_nb run ' in x]
    assert len(closing) == 1 and re.search(r'prism_nb run trained and wrote .*\.json \(Avg\. \d+\.\d\d\); model: ', closing[0]), lines
    epochs = [i for i, x in enumerate(lines) if re.search(r'ERM fit epoch \d+/\d+: ', x)]
    assert len(epochs) == TINY['epochs'], lines
    assert all(x.strip() for x in lines[epochs[0]:epochs[-1] + 1]), f'a blank line between epoch lines: {lines}'
    assert 'prism_nb run trained and wrote' in (twice['tmp'] / 'a.ipynb').read_text()  # the notebook has it too
    closing = [x for x in twice['second'] if 'prism_nb run ' in x]
    assert len(closing) == 1, twice['second']
    assert len([x for x in twice['second'] if 'skipped: ' in x]) == 1, twice['second']  # the run's own line too
    assert re.search(r'returned the existing record .* \(nothing trained; Avg\. \d+\.\d\d\).* -p force True', closing[0])
    assert 'returned the existing record' in (twice['tmp'] / 'b.ipynb').read_text()

@pytest.mark.parametrize('param,value,msg', [('method', 'nope', 'valid methods'), ('backbone', 'resnet', 'valid backbones')])
def test_unknown_names_fail_fast(root, tmp_path, param, value, msg):
    t0 = time.time()
    res = subprocess.run(papermill(root, tmp_path / 'x.ipynb', tmp_path / 'r', **{param: value}), capture_output=True, text=True)
    assert res.returncode != 0
    assert msg in res.stdout + res.stderr + (tmp_path / 'x.ipynb').read_text()
    assert not records(tmp_path / 'r')

def test_killed_run_leaves_no_record(root, tmp_path):
    results = tmp_path / 'results'
    # a long run, killed with SIGKILL once training has started
    cmd = papermill(root, tmp_path / 'k.ipynb', results, extra=['--log-output'], **LONG)
    log = open(tmp_path / 'log.txt', 'w')
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.time() + 300
    while time.time() < deadline and 'ERM fit' not in (tmp_path / 'log.txt').read_text(): time.sleep(0.5)
    time.sleep(1)
    assert proc.poll() is None, 'the run ended before it could be killed'
    # the kernel runs in its own session: kill it and papermill at once, as a crash would
    for pid in [*children(proc.pid), proc.pid]: os.kill(pid, signal.SIGKILL)
    proc.wait(); time.sleep(1)
    assert not records(results)
    # only the OS lock file may remain (it is released with the process): no record, no checkpoint, no temporary file
    assert not [p for p in results.rglob('*') if p.is_file() and not p.name.endswith('.lock')], 'a killed run left files behind'
    assert not [p for p in (tmp_path / 'checkpoints').rglob('*') if p.is_file()] if (tmp_path / 'checkpoints').exists() else True
    # the same config runs again from scratch and completes
    subprocess.run(papermill(root, tmp_path / 'k2.ipynb', results, **LONG), check=True, capture_output=True)
    assert len(records(results)) == 1

def test_prism_smoke(root, tmp_path):
    results = tmp_path / 'results'
    subprocess.run(papermill(root, tmp_path / 'p.ipynb', results, method='prism', pretrain_epochs=1), check=True, capture_output=True)
    rec = json.loads(records(results)[0].read_text())
    assert rec['config']['method'] == 'prism' and len(rec['pretrain_history']) == 1
    assert {'L_feat', 'L_samp', 'val_L_feat', 'val_L_samp'} <= set(rec['pretrain_history'][0])
    assert sorted(rec['metrics']) == sorted(HARC_CONDITIONS)

def test_prism_variant_and_bad_variant(root, tmp_path):
    results = tmp_path / 'results'
    subprocess.run(papermill(root, tmp_path / 'v.ipynb', results, method='prism', variant='no_esamp', pretrain_epochs=1), check=True, capture_output=True)
    assert records(results)[0].name.startswith('prism-no_esamp_cnn_s0_')
    res = subprocess.run(papermill(root, tmp_path / 'w.ipynb', tmp_path / 'r2', method='prism', variant='nope'), capture_output=True, text=True)
    assert res.returncode != 0 and 'valid variants' in res.stdout + res.stderr + (tmp_path / 'w.ipynb').read_text()

def test_sweep_runs_commands_and_resumes(tmp_path):
    from prism_nb.sweep import sweep_configs, run_sweep
    from prism_nb.config import record_path
    cfgs = sweep_configs(['erm'], seeds=[0, 1], epochs=1, patience=1, max_windows=128, hparams={'weight_decay': 0.0})
    summary = run_sweep(cfgs, workers=2, results_dir=tmp_path / 'results', out_dir=tmp_path / 'runs', progress=False)
    assert len(summary['done']) == 2 and summary['failed'] == []
    assert all(record_path(c, tmp_path / 'results').exists() for c in cfgs)
    again = run_sweep(cfgs, results_dir=tmp_path / 'results', out_dir=tmp_path / 'runs', progress=False)
    assert again['done'] == [] and len(again['skipped']) == 2


def test_a_failed_run_shows_its_cause_before_any_traceback(tmp_path):
    "Missing data: the first line after papermill's own start lines names the cause, not a traceback or Ctrl-C."
    root = Path(__file__).resolve().parent.parent
    cmd = papermill(root, tmp_path / 'o.ipynb', tmp_path / 'r', method='erm')
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         env={**os.environ, 'PRISM_DATA': str(tmp_path / 'no_data')})
    assert res.returncode != 0
    out = res.stdout
    cause = out.find('prism_nb run failed: FileNotFoundError')
    assert cause >= 0, out[-3000:]
    for later in ('Traceback', 'KeyboardInterrupt', 'PapermillExecutionError'):
        assert out.find(later) == -1 or out.find(later) > cause, (later, out[:3000])
