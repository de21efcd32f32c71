"""Score the mend's models and PRISM's defaults at the fresh seeds under the burst family (`BURST_DESIGN` of
nbs/21_bunching.ipynb), resumable: a model whose `harc_bursts` record exists is skipped, one whose checkpoint is
not on this machine is left for later. Inference only: seconds per model.

    python tools/mend_bursts.py           # every such model at hand, once
    python tools/mend_bursts.py --watch   # and again every 2 minutes, while tools/fresh_seed_runs.py trains them

A checkpoint is not committed, so a model must be scored on the machine and in the session that trained it;
`--watch` beside the training queue does that as each model appears. A model whose checkpoint is truncated or
damaged is named and skipped, the others are scored, and the script ends with the list of the damaged ones and
exit status 1; a results folder that is missing (or goes while `--watch` waits) is named."""
import os, sys, time
from pathlib import Path

from _cli import parser, results_folder

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault('PRISM_DATA', str(ROOT.parent / 'shared' / 'data'))
WATCH_SECONDS = 120  # --watch: how long between two looks at the results folder


def parse(argv):
    p = parser(__doc__)
    p.add_argument('--watch', action='store_true',
                   help='look again every 2 minutes while models are still being trained')
    return p.parse_args(argv)


def score_models(sources: list, score, damaged: dict) -> int:
    """Score each record file of `sources` with `score(src) -> line` (None: its checkpoint is not on this machine),
    printing each line; a model whose scoring fails (a truncated or damaged checkpoint) goes into `damaged`
    (name -> why) and the others are still scored. Returns how many were scored."""
    done = 0
    for src in sources:
        if src.name in damaged:  # already found damaged: not tried again at each look
            continue
        t0 = time.time()
        try:
            line = score(src)
        except Exception as e:  # noqa: BLE001  (whatever the checkpoint's damage, the other models go on)
            damaged[src.name] = f'{type(e).__name__}: {e}'
            print(f'{src.name}: DAMAGED, not scored: {damaged[src.name]}', flush=True)
            continue
        if line is None:
            print(f'{src.name}: no checkpoint here, cannot be scored', flush=True)
            continue
        done += 1
        print(f'{line} ({time.time() - t0:.0f} s)', flush=True)
    return done


def damaged_report(damaged: dict) -> str:
    "The closing lines naming every model that could not be scored."
    return (f'{len(damaged)} model(s) with a damaged checkpoint, not scored (retrain them, or delete the '
            'checkpoint and its record to have them retrained):\n' + '\n'.join(f'  {n}: {why}' for n, why in damaged.items()))


if __name__ == '__main__':
    args = parse(sys.argv[1:])
    results_folder('harc_mend', why="the mend's r_b is chosen from its records")
    import torch
    from prism_nb.analysis import evaluation_path
    from prism_nb.mend import BURST_DESIGN, _prism_defaults, burst_record, mend_choice, mend_config
    from prism_nb.checkpoints import checkpoint_file
    from prism_nb.config import record_path
    from prism_nb.records import read_record
    from prism_nb.verdict import FRESH_SEEDS

    def burst_line(src: Path):
        ck = checkpoint_file(read_record(src), src)
        if ck is None or not ck.exists():
            return None
        res = burst_record(src)['results']
        return f"{src.name}: One-burst {res['One-burst']['acc']:.1f}, Two-bursts {res['Two-bursts']['acc']:.1f}"

    torch.set_num_threads(1)
    damaged = {}
    while True:
        results = results_folder('harc_mend', why="the mend's r_b is chosen from its records")  # gone mid-watch: named
        r_b = mend_choice(results)
        if r_b is None:
            sys.exit(f"the mend's r_b cannot be chosen: its selection runs under {results / 'harc_mend'} are not all "
                     'there (python tools/bunching_runs.py 2 mend runs them)')
        cfgs = [c for s in FRESH_SEEDS for c in (mend_config(s, r_b), _prism_defaults('harc_ps', s))]
        waiting, ready = 0, []
        for cfg in cfgs:
            src = record_path(cfg, results)
            if not src.exists():
                waiting += 1
                continue
            if not evaluation_path(src, 'harc_bursts', BURST_DESIGN).exists():
                ready.append(src)
        done = score_models(ready, burst_line, damaged)
        if not args.watch or waiting == 0:
            print(f'{done} scored, {waiting} models not trained yet', flush=True)
            break
        time.sleep(WATCH_SECONDS)
    if damaged:
        sys.exit(damaged_report(damaged))
