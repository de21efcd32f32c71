"""Score the mend's models and PRISM's defaults at the fresh seeds under the burst family (`BURST_DESIGN` of
nbs/21_bunching.ipynb), resumable: a model whose `harc_bursts` record exists is skipped, one whose checkpoint is
not on this machine is left for later. Inference only: seconds per model.

    python tools/mend_bursts.py           # every such model at hand, once
    python tools/mend_bursts.py --watch   # and again every 2 minutes, while tools/fresh_seed_runs.py trains them

A checkpoint is not committed, so a model must be scored on the machine and in the session that trained it;
`--watch` beside the training queue does that as each model appears."""
import os, sys, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault('PRISM_DATA', str(ROOT.parent / 'shared' / 'data'))

if __name__ == '__main__':
    import torch
    from prism_nb.analysis import evaluation_path
    from prism_nb.mend import BURST_DESIGN, _prism_defaults, burst_record, mend_choice, mend_config
    from prism_nb.checkpoints import checkpoint_file
    from prism_nb.config import record_path
    from prism_nb.records import read_record
    from prism_nb.verdict import FRESH_SEEDS

    torch.set_num_threads(1)
    results = Path(os.environ.get('PRISM_RESULTS', ROOT / 'results'))
    while True:
        r_b = mend_choice(results)
        cfgs = [c for s in FRESH_SEEDS for c in (mend_config(s, r_b), _prism_defaults('harc_ps', s))]
        done = waiting = 0
        for cfg in cfgs:
            src = record_path(cfg, results)
            if not src.exists():
                waiting += 1
                continue
            if evaluation_path(src, 'harc_bursts', BURST_DESIGN).exists():
                continue
            ck = checkpoint_file(read_record(src), src)
            if ck is None or not ck.exists():
                print(f'{src.name}: no checkpoint here, cannot be scored', flush=True)
                continue
            t0 = time.time()
            out = burst_record(src)
            done += 1
            res = out['results']
            print(f"{src.name}: One-burst {res['One-burst']['acc']:.1f}, Two-bursts "
                  f"{res['Two-bursts']['acc']:.1f} ({time.time() - t0:.0f} s)", flush=True)
        if '--watch' not in sys.argv or waiting == 0:
            print(f'{done} scored, {waiting} models not trained yet', flush=True)
            break
        time.sleep(120)
