"""The evaluations of nbs/21_bunching.ipynb over every trained ERM and PRISM model at hand, resumable: a model
whose evaluation record exists is skipped.

    python tools/bunching_probe.py   # records of the folders in EXPERIMENTS whose checkpoints are here

The models: the tuned search's (nbs/20_tuning.ipynb), and those of tools/bunching_runs.py (PRISM's variants at the
paper's severity, the two-thread ERM and PRISM, the mend), all trained on Random. Each is scored under Random, send-on-delta and
the bunched conditions (`condition_scores`, kept in results/harc_signal/); each PRISM model also at the paper's
severity with both branches, with E_samp held at its source-validation mean and with E_feat held so
(`branch_ablation`, kept in results/harc_bunching_probe/) where it has both branches. Inference only: seconds per
model. A model whose checkpoint is damaged is named and skipped, the others are scored, and the script ends listing
the damaged ones (exit status 1)."""
import os, sys, time
from pathlib import Path

from _cli import parser, results_folder

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault('PRISM_DATA', str(ROOT.parent / 'shared' / 'data'))

EXPERIMENTS = ('harc_tuned', 'harc_ps', 'harc_ps_threads2', 'harc_mend')  # the folders whose models are scored

if __name__ == '__main__':
    parser(__doc__).parse_args(sys.argv[1:])  # no arguments: any is refused
    results = results_folder()
    if not any((results / e).is_dir() for e in EXPERIMENTS):
        sys.exit(f'no records under {results} in any of {EXPERIMENTS}: no model to evaluate')
    import torch
    from prism_nb.bunching import branch_probe_record, signal_record
    from prism_nb.checkpoints import checkpoint_file
    from prism_nb.records import read_records

    BOTH_BRANCHES = ('full', 'avg', 'no_views', 'no_lfeat', 'no_lsamp', 'span', 'bunch')
    torch.set_num_threads(1)
    done = skipped = 0
    damaged = {}  # record file -> why its model could not be scored
    for rec in (r for e in EXPERIMENTS if (results / e).is_dir() for r in read_records(results / e)):
        if rec['config']['method'] not in ('erm', 'prism'):
            continue
        ck = checkpoint_file(rec, rec.path)
        if ck is None or not ck.exists():
            skipped += 1
            continue
        t0 = time.time()
        try:
            signal_record(rec.path)
            done += 1
            if rec['config']['method'] != 'prism' or rec['config']['variant'] not in BOTH_BRANCHES:
                continue
            out = branch_probe_record(rec.path)
        except Exception as e:  # noqa: BLE001  (whatever the checkpoint's damage, the other models go on)
            damaged[rec.path.name] = f'{type(e).__name__}: {e}'
            print(f'{rec.path.name}: DAMAGED, not scored: {damaged[rec.path.name]}', flush=True)
            continue
        print(f"{rec.path.name}: {time.time() - t0:.1f} s; Mid-P worst class "
              f"{min(out['results']['Mid-P']['scores']['both']['per_class']):.0f}% -> "
              f"{min(out['results']['Mid-P']['scores']['E_samp held']['per_class']):.0f}% with E_samp held",
              flush=True)
    print(f'{done} models evaluated, {skipped} without a checkpoint here', file=sys.stderr)
    if damaged:
        sys.exit(f'{len(damaged)} model(s) with a damaged checkpoint, not scored (retrain them, or delete the '
                 'checkpoint and its record to have them retrained):\n'
                 + '\n'.join(f'  {n}: {why}' for n, why in damaged.items()))
