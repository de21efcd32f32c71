"""The runs behind nbs/22_verdict.ipynb, resumable: every run whose record exists is skipped, so the same command
continues where a stopped one left off.

    python tools/fresh_seed_runs.py [workers] [--plan]   # default: 2 papermill workers of one torch thread

1. Each method's tuned recipe (`recipe_choice`: the draw of best mean source validation over the search's trial
   seeds) at the fresh seeds 10-19 (task `harc_fresh`: trained on Random, each model scored on both protocols),
   seed by seed so a stopped queue leaves every method with the same seeds; within a seed the longest runs first.
2. The mend at 10 more seeds (`harc_mend`, seeds 10-19, the r_b chosen on source validation) and, paired with it,
   PRISM's defaults at the same seeds (`harc_fresh`, draw 0; its recipe when that is draw 0).
3. The runner-ups within one standard error of the choice (PRISM and the best baselines, `runner_up_methods`).

Run `python tools/mend_bursts.py --watch` beside it: it scores each mend and PRISM-default model under the burst
family as its checkpoint appears (checkpoints are not committed, so a model is scored in the session that trained
it); this script also scores whatever is left at its end.

`--plan` prints the queue's size and its cost by the search's own measured CPU seconds per run, and runs nothing."""
import os, sys, time
from pathlib import Path

from _cli import (cluster_options, executor, parser, print_plan, report_sweep, results_folder,
                  search_cpu_seconds, workers_arg)

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault('PRISM_DATA', str(ROOT.parent / 'shared' / 'data'))


def parse(argv):
    p = workers_arg(cluster_options(parser(__doc__)))
    p.add_argument('--plan', action='store_true', help='print the queue and its cost; run nothing')
    return p.parse_args(argv)


if __name__ == '__main__':
    args = parse(sys.argv[1:])
    workers = args.workers
    results = results_folder('harc_tuned', 'harc_mend', why="the recipes and the mend's r_b are chosen from them")
    import prism_nb  # noqa: F401  (registers harc_fresh and harc_mend)
    from prism_nb.mend import mend_choice, mend_config
    from prism_nb.sweep import run_sweep
    from prism_nb.tuning import tuned_frame
    from prism_nb.verdict import FRESH_SEEDS, recipe_choice, recipe_configs, runner_up_methods

    frame = tuned_frame(results_dir=results)
    choice = recipe_choice(frame)
    cost = search_cpu_seconds(results)
    recipes = []
    for s in FRESH_SEEDS:
        seed_runs = recipe_configs(choice.draw.to_dict(), seeds=[s])
        recipes += sorted(seed_runs, key=lambda c: -cost.get(c['method'], 0.0))
    r_b = mend_choice(results)
    if r_b is None:
        sys.exit(f"the mend's r_b cannot be chosen: its selection runs under {results / 'harc_mend'} are not all "
                 'there (python tools/bunching_runs.py 2 mend runs them)')
    mend = []
    for s in FRESH_SEEDS:
        mend.append(mend_config(s, r_b))
        if choice.loc['prism', 'draw'] != 0:
            mend += recipe_configs({'prism': 0}, seeds=[s])
    runner_ups = [
        c for s in FRESH_SEEDS
        for c in recipe_configs({m: int(choice.loc[m, 'runner_up']) for m in runner_up_methods(choice, frame)},
                                seeds=[s])
    ]
    stages = [(name, cfgs, workers, 1) for name, cfgs in
              (('recipes', recipes), ('mend and PRISM defaults', mend), ('runner-ups', runner_ups))]
    print_plan(stages, results, cost)
    if args.plan:
        sys.exit(0)
    t0 = time.time()
    out = run_sweep([c for _, cfgs, _, _ in stages for c in cfgs], workers=workers, threads=1, results_dir=results,
                    executor=executor(args, results), progress=False)
    report_sweep('fresh seeds', out, t0)
    import subprocess
    subprocess.run([sys.executable, str(ROOT / 'tools' / 'mend_bursts.py')], check=False)
