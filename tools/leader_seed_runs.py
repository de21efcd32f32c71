"""The runs that take the verdict's leaders to 20 fresh seeds (nbs/22_verdict.ipynb), resumable: every run whose
record exists is skipped, so the same command continues where a stopped one left off.

    python tools/leader_seed_runs.py [--workers N] [--plan]

1. PRISM's recipe and runner-up and the four closest tuned baselines (`LEADERS`) at the fresh seeds 20-29
   (`LEADER_SEEDS`, task `harc_fresh`: trained on Random, each model scored on both protocols), seed by seed so a
   stopped queue leaves every leader with the same seeds; `--workers` papermill workers of one torch thread.
2. Numerics as a source of spread: PRISM's and ERM's recipes at all 20 fresh seeds retrained with two torch threads
   (experiment `harc_fresh_threads2`, the same configs otherwise), one worker at a time.

`--plan` prints each stage's runs and its cost by the search's own measured CPU seconds per run, and runs nothing."""
import os, sys, time
from pathlib import Path

from _cli import count, parser, print_plan, report_sweep, results_folder, search_cpu_seconds

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault('PRISM_DATA', str(ROOT.parent / 'shared' / 'data'))


def parse(argv):
    p = parser(__doc__)
    p.add_argument('--workers', type=count, default=2, help='papermill workers of one torch thread (stage 1)')
    p.add_argument('--plan', action='store_true', help='print the queue and its cost; run nothing')
    return p.parse_args(argv)


if __name__ == '__main__':
    args = parse(sys.argv[1:])
    import prism_nb  # noqa: F401  (registers harc_fresh)
    from prism_nb.sweep import run_sweep
    from prism_nb.verdict import FRESH_SEEDS, LEADER_SEEDS, recipe_choice, recipe_configs

    results = results_folder('harc_tuned', why='the recipes are chosen from them')
    choice = recipe_choice(results_dir=results)
    draws = {m: int(choice.loc[m, 'draw']) for m in ('erm', 'vrex', 'mixup', 'coral', 'prism')}
    cost = search_cpu_seconds(results)
    leaders = []
    for s in LEADER_SEEDS:
        seed_runs = recipe_configs(draws, seeds=[s]) + recipe_configs(
            {'prism': int(choice.loc['prism', 'runner_up'])}, seeds=[s])
        leaders += sorted(seed_runs, key=lambda c: -cost.get(c['method'], 0.0))
    threads2 = recipe_configs({m: draws[m] for m in ('prism', 'erm')}, seeds=FRESH_SEEDS + LEADER_SEEDS,
                              experiment='harc_fresh_threads2')
    stages = [('leaders at seeds 20-29', leaders, args.workers, 1), ('two torch threads', threads2, 1, 2)]
    print_plan(stages, results, cost)
    if args.plan:
        sys.exit(0)
    for name, cfgs, workers, threads in stages:
        t0 = time.time()
        out = run_sweep(cfgs, workers=workers, threads=threads, results_dir=results, progress=False)
        report_sweep(name, out, t0)
