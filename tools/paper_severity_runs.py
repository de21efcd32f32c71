"""The runs behind HAR-C at the paper's severity (nbs/18_paper_severity.ipynb) and the ceiling/span gaps, resumable:
every run whose record exists is skipped, so the same command continues where a stopped one left off.

    python tools/paper_severity_runs.py [workers]   # default 2 processes, one torch thread each

1. harc_ps: every method of the main table and PRISM's span variant, seeds 0-9, seed by seed (so a stopped sweep
   leaves every method with the same seeds); within a seed the span variant comes last and reuses the seed's
   pretraining.
2. PRISM trained on First/Last/Mid (the ceiling table's rows), seeds 0-2.
3. PRISM's concentration grid for seeds 3-9, evaluated on the harc_ps PRISM models (their training is HAR-C's:
   same splits, budget, Random masks and seeds; only the test conditions differ)."""
import os, sys, time, traceback
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from _cli import parser, workers_arg

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault('PRISM_DATA', str(ROOT.parent / 'shared' / 'data'))

def train(job: dict):
    "One run (skipped when its record exists): (job, seconds, Avg. or the error's tail)."
    import torch; torch.set_num_threads(1)
    from prism_nb.experiment import run
    t0 = time.time()
    try:
        avg = run(job, results_dir=ROOT / 'results', threads=1, progress=False)['avg']
        return job, round(time.time() - t0), avg  # seconds: ~0 when the record existed
    except Exception:
        return job, -1, traceback.format_exc()[-800:]

def concentration(seed: int):
    "PRISM's concentration grid record of the harc_ps model of `seed` (needs its checkpoint on this machine)."
    from prism_nb.analysis import evaluation_record, CONCENTRATION_DESIGN, concentration_grid
    from prism_nb.config import make_config, record_path
    src = record_path(make_config(dataset='harc_ps', method='prism', seed=seed), ROOT / 'results')
    if not src.exists(): return seed, 'no harc_ps record yet'
    try:
        evaluation_record(src, 'harc_concentration', CONCENTRATION_DESIGN, concentration_grid)
        return seed, 'done'
    except FileNotFoundError as e: return seed, f'no checkpoint: {e}'

def parse(argv):
    p = parser(__doc__)
    workers_arg(p, 'processes')
    return p.parse_args(argv)

if __name__ == '__main__':
    args = parse(sys.argv[1:])
    import prism_nb  # noqa: F401  (registers every task, harc_ps included)
    from prism_nb.algorithms import method_names
    order = [('erm', 'full'), ('prism', 'full')] + [(m, 'full') for m in method_names() if m not in ('erm', 'prism')] + [('prism', 'span')]
    jobs = [dict(dataset='harc_ps', method=m, variant=v, seed=s) for s in range(10) for m, v in order]
    jobs += [dict(method='prism', seed=s, train_condition=c) for s in range(3) for c in ('First', 'Last', 'Mid')]
    with ProcessPoolExecutor(args.workers) as ex:
        for f in as_completed([ex.submit(train, j) for j in jobs]): print(*f.result(), flush=True)
    for s in range(3, 10): print('concentration', *concentration(s), flush=True)
