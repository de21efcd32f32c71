"""Retrain the runs behind the severity curves with their models kept, then score each class on the curves
(nbs/14_analysis.ipynb, `SEVERITY_CLASS_DESIGN`), resumable: every run or evaluation whose record exists is skipped.

    python tools/severity_class_runs.py [workers]   # default: 2 papermill workers of one torch thread

The committed severity curves score the main table's models, which were not kept, with accuracy alone. These are
the same configs (ERM and PRISM on the CNN, ERM on every other backbone; seeds 0-2) in experiment
`SEVERITY_MODELS` (results/harc_severity_models/, models in results/checkpoints/harc_severity_models/): the CNN
runs first, so a stopped queue has the curves of the main figure. About 1.7 CPU hours, from the main table's
timings of the same configs."""
import os, sys, time
from pathlib import Path

from _cli import parser, report_sweep, results_folder, workers_arg

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault('PRISM_DATA', str(ROOT.parent / 'shared' / 'data'))


def parse(argv):
    p = workers_arg(parser(__doc__))
    return p.parse_args(argv)


if __name__ == '__main__':
    args = parse(sys.argv[1:])
    results = results_folder()
    from prism_nb.analysis import SEVERITY_MODELS, severity_configs, severity_class_evaluations
    from prism_nb.config import make_config
    from prism_nb.sweep import run_sweep

    workers = args.workers
    t0 = time.time()
    out = run_sweep([make_config(**o) for o in severity_configs(experiment=SEVERITY_MODELS)],
                    workers=workers, threads=1, results_dir=results, progress=False)
    report_sweep('severity models', out, t0)
    made = severity_class_evaluations(results_dir=results, progress=False)
    print(f"per-class severity records: {len(made['made'])} made or read, "
          f"{len(made['missing'])} missing: {made['missing']}", flush=True)
