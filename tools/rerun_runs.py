"""Retrain the main table's ERM and PRISM (CNN) seeds 0-2 on this machine into results/harc_rerun/, resumable:
the records name their CPU, so `rerun_spread` (nbs/11b_ledger.ipynb) can say what a rerun on another CPU gives
against the committed records of the same configs (the same config but for `experiment`).

    python tools/rerun_runs.py   # one process, one torch thread; about 20 CPU minutes"""
import os, sys
from pathlib import Path

from _cli import parser

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault('PRISM_DATA', str(ROOT.parent / 'shared' / 'data'))

if __name__ == '__main__':
    parser(__doc__).parse_args(sys.argv[1:])  # no arguments: any is refused
    import torch; torch.set_num_threads(1)
    from prism_nb.experiment import run
    for seed in range(3):
        for method in ('erm', 'prism'):
            rec = run(dict(method=method, seed=seed, experiment='harc_rerun'), results_dir=ROOT / 'results',
                      threads=1, progress=False)
            print(method, seed, round(rec['avg'], 2), rec['timing']['total_seconds'], flush=True)
