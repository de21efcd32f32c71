"""The random hyperparameter search on HAR-C behind nbs/20_tuning.ipynb, resumable: every run whose record exists
is skipped, so the same command continues where a stopped one left off.

    python tools/tuned_search.py [workers] [last_draw]   # default: 2 papermill workers of one torch thread, draws 1-9 (with draw 0, the defaults: 10 draws)

Each of the 14 built-in methods, draws 1..last_draw of its search distribution (`draw_hparams`), trial seeds 0-2,
through the sweep engine (`run_sweep`: one papermill run of nbs/run_harc.ipynb per config), queued draw by draw so
a stopped search leaves every method with the same draws but the last. Within a draw the runs go longest first (the
method's mean CPU seconds over its runs so far), and the draws follow one another without a barrier: a worker never
idles at a draw's end while the other trains PRISM. Records go to results/harc_tuned/, models to
results/checkpoints/harc_tuned/; each run scores its model under both HAR-C protocols."""
import os, sys, time
from pathlib import Path

from _cli import cluster_options, count, executor, parser, report_sweep, results_folder, workers_arg

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault('PRISM_DATA', str(ROOT.parent / 'shared' / 'data'))


def parse(argv):
    p = workers_arg(cluster_options(parser(__doc__)))
    p.add_argument('last_draw', nargs='?', type=count, default=9, help='search draws 1..last_draw (draw 0: the defaults)')
    return p.parse_args(argv)


if __name__ == '__main__':
    args = parse(sys.argv[1:])
    results = results_folder()
    from prism_nb.sweep import run_sweep
    from prism_nb.tuning import search_configs

    from prism_nb.records import read_records

    workers, last = args.workers, args.last_draw
    seconds = {}
    for r in read_records(results / 'harc_tuned') if (results / 'harc_tuned').is_dir() else []:
        seconds.setdefault(r['config']['method'], []).append(r['timing']['total_seconds'])
    cost = {m: sum(s) / len(s) for m, s in seconds.items()}
    queue = [c for draw in range(1, last + 1)
             for c in sorted(search_configs(draws=[draw]), key=lambda c: -cost.get(c['method'], 0.0))]
    t0 = time.time()
    out = run_sweep(queue, workers=workers, threads=1, results_dir=results,
                    executor=executor(args, results), progress=False)
    report_sweep(f'draws 1-{last}', out, t0)
