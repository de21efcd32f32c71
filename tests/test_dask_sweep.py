"""run_sweep on a Dask cluster of two local worker processes: a sweep, its resumption, a config locked by another
sweep, and a worker killed while its run holds the lock of its record."""
import os, signal, threading, time
import pytest

distributed = pytest.importorskip('distributed', reason="Dask's distributed is not importable: pip install -e '.[cluster]'", exc_type=ImportError)
import psutil  # a dependency of distributed

from prism_nb.sweep import sweep_configs, run_sweep
from prism_nb.config import record_path
from prism_nb.records import read_record, lock_path, acquire_run_lock

def tiny(seeds): return sweep_configs(['erm'], seeds=seeds, epochs=1, patience=1, max_windows=128)

@pytest.fixture(scope='module')
def client():
    # worker processes under nannies (which restart a dead one), one thread each: one run at a time per worker
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
         distributed.Client(cluster) as client:
        yield client

def test_sweep_then_resume(client, tmp_path):
    cfgs, results = tiny([0, 1, 2]), tmp_path / 'results'
    s = run_sweep(cfgs, executor=client.get_executor(), results_dir=results, out_dir=tmp_path / 'runs', threads=1, progress=False)
    assert s['failed'] == [] and s['in_progress'] == [] and sorted(s['done']) == sorted(record_path(c, results).stem for c in cfgs)
    for c in cfgs: assert read_record(record_path(c, results))['config'] == c
    again = run_sweep(cfgs, executor=client, results_dir=results, out_dir=tmp_path / 'runs', threads=1, progress=False)
    assert again['done'] == [] and len(again['skipped']) == 3

def test_config_locked_by_another_sweep_is_in_progress(client, tmp_path):
    cfg, = tiny([3])
    path = record_path(cfg, tmp_path / 'results'); path.parent.mkdir(parents=True)
    lock = acquire_run_lock(path)  # as another sweep's run of this config holds it while training
    try: s = run_sweep([cfg], executor=client, results_dir=tmp_path / 'results', out_dir=tmp_path / 'runs', threads=1, progress=False)
    finally: lock.release()
    assert s['in_progress'] == [path.stem] and s['failed'] == [] and s['done'] == [] and not path.exists()

def alive(pid) -> bool:
    try: return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess: return False

def kill_worker_running(client, record, killed: dict):
    "Once the run that writes `record` holds its lock, SIGKILL the Dask worker process it runs under; note what happened in `killed`."
    deadline = time.monotonic() + 300  # a bound against hanging, not a check
    while time.monotonic() < deadline and not record.exists():
        if lock_path(record).exists():  # the run has taken the lock (the file is made by the first acquire)
            for pid in client.run(os.getpid).values():
                try: runs = [p.pid for p in psutil.Process(pid).children() if record.stem in ' '.join(p.cmdline())]
                except psutil.Error: continue
                if runs:
                    os.kill(pid, signal.SIGKILL); killed.update(worker=pid, papermill=runs[0])
                    while alive(runs[0]) and time.monotonic() < deadline: time.sleep(0.1)
                    # an orphaned run would end only after its training cell, so with its record written
                    killed['record_when_run_ended'] = record.exists()
                    return
        time.sleep(0.2)

def test_killed_worker_loses_nothing(client, tmp_path):
    cfgs, results = tiny([0, 1]), tmp_path / 'results'
    killed = {}
    killer = threading.Thread(target=kill_worker_running, args=(client, record_path(cfgs[0], results), killed), daemon=True)
    killer.start()
    s = run_sweep(cfgs, executor=client, results_dir=results, out_dir=tmp_path / 'runs', threads=1, progress=False)
    killer.join()
    assert killed, 'the run finished before its worker could be killed'
    # the killed run died with its worker, without its record, and the lock was free for Dask's rerun of the task
    assert killed['record_when_run_ended'] is False
    assert s['failed'] == [] and s['in_progress'] == [] and sorted(s['done']) == sorted(record_path(c, results).stem for c in cfgs)
    for c in cfgs: assert read_record(record_path(c, results))['config'] == c
    client.wait_for_workers(2, timeout=120)  # the nanny restarted the killed worker
    assert killed['worker'] not in client.run(os.getpid).values()
