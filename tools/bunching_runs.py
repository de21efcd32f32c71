"""The runs behind the bunched-time mechanism and its mend (nbs/21_bunching.ipynb), queued behind the tuned search
and resumable: every run whose record exists is skipped, so the same command continues where a stopped one left off.

    python tools/bunching_runs.py [workers] [mend]   # default: 2 papermill workers of one torch thread;
                                                     # `mend`: stop once the mend's 10 seeds are done

First the mend: PRISM's `bunch` variant at each candidate r_b (`MEND_CANDIDATES`) on seeds 0-1 (task
`harc_mend`: trained on Random, each model scored on both protocols), then the r_b chosen on source validation
(`mend_choice`) at the remaining seeds 2-9, so the mend's table is complete before the longer mechanism runs start.
Then, at the paper's severity (harc_ps), CNN, seed by seed (0-9) so a stopped queue leaves every row with the same
seeds:
1. PRISM's ablation variants that take one part away: w/o E_samp, w/o E_feat, K = 1, average instead of worst
   view.
2. Numerical fragility: ERM and PRISM retrained with two torch threads instead of one (experiment
   `harc_ps_threads2`: the same configs otherwise)."""
import os, sys
from pathlib import Path

from _cli import parser, results_folder, workers_arg

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault('PRISM_DATA', str(ROOT.parent / 'shared' / 'data'))

VARIANTS = ('no_esamp', 'no_efeat', 'no_views', 'avg')


def parse(argv):
    p = workers_arg(parser(__doc__))
    p.add_argument('stop', nargs='?', choices=['mend'], help="mend: stop once the mend's 10 seeds are done")
    return p.parse_args(argv)


if __name__ == '__main__':
    args = parse(sys.argv[1:])
    results = results_folder()
    import prism_nb  # noqa: F401  (registers harc_ps and harc_mend)
    from prism_nb.mend import MEND_CANDIDATES, MEND_SELECTION_SEEDS, mend_choice, mend_config
    from prism_nb.config import make_config
    from prism_nb.sweep import run_sweep

    workers = args.workers
    choice = [mend_config(s, r_b) for s in MEND_SELECTION_SEEDS for r_b in MEND_CANDIDATES]
    out = run_sweep(choice, workers=workers, threads=1, results_dir=results, progress=False)
    r_b = mend_choice(results)
    print(f"mend choice: {len(out['done'])} trained, {len(out['failed'])} failed; r_b = {r_b}", flush=True)
    if r_b is not None:
        out = run_sweep([mend_config(s, r_b) for s in range(10)], workers=workers, threads=1,
                        results_dir=results, progress=False)
        print(f"mend at 10 seeds: {len(out['done'])} trained, {len(out['failed'])} failed", flush=True)
    if args.stop == 'mend':
        sys.exit(0)
    for seed in range(10):
        runs = [make_config(dataset='harc_ps', method='prism', variant=v, seed=seed) for v in VARIANTS]
        out = run_sweep(runs, workers=workers, threads=1, results_dir=results, progress=False)
        print(f"seed {seed} ablations: {len(out['done'])} trained, {len(out['failed'])} failed", flush=True)
        threads2 = [make_config(dataset='harc_ps', method=m, seed=seed, experiment='harc_ps_threads2')
                    for m in ('erm', 'prism')]
        out = run_sweep(threads2, workers=1, threads=2, results_dir=results, progress=False)
        print(f"seed {seed} two threads: {len(out['done'])} trained, {len(out['failed'])} failed", flush=True)
