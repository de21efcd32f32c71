"""Time the pre-rewrite mTAND and GRU-D (`tests/reference_backbones.py`) against the current ones.

    python tools/bench_backbones.py [--threads 1 2] [--steps 20] [--prism] [--out tables/bench_rewrite]

A training step is `ERM.update`: forward, backward and Adam through the encoder, a linear head and
cross-entropy, on a synthetic HAR-C-shaped batch (64 windows of 128 steps x 6 features, 20% of the cells
observed, irregular increasing times). Old and new steps alternate in one process, so load from other
processes falls on both alike; the table gives the median step after a warm-up. An epoch is HAR-C's
5,910 source windows in batches of 64; its FLOP floor is 3 x forward FLOPs per window (`count_flops`)
x 5,910 / the GFLOP/s of `peak_gflops` at the same thread count. With --prism, PRISM's step (two
encoders, K = 4 views of each window) is timed too, as a multiple of ERM's step. With --out, the rows are
also written to <out>.md and <out>.csv.
"""
import statistics, sys, time
from pathlib import Path

from _cli import count, parser


def parse(argv):
    ap = parser(__doc__)
    ap.add_argument('--threads', type=count, nargs='+', default=[1, 2])
    ap.add_argument('--steps', type=count, default=20, help='timed steps per implementation, after 3 warm-up steps')
    ap.add_argument('--prism', action='store_true', help="also time PRISM's step (slow with the old encoders)")
    ap.add_argument('--prism-steps', type=count, default=10)
    ap.add_argument('--out', help='also write the rows to OUT.md and OUT.csv (e.g. tables/bench_rewrite)')
    args = ap.parse_args(argv)
    if args.out and not Path(args.out).parent.is_dir():
        ap.error(f'--out {args.out}: no folder {Path(args.out).parent} to write it in')
    return args


if __name__ == '__main__':
    ARGS = parse(sys.argv[1:])  # a bad command line is refused before torch is imported

import torch  # noqa: E402

from prism_nb.algorithms import make_algorithm  # noqa: E402
from prism_nb.backbones import BACKBONE_DISPLAY, count_flops, make_backbone
from prism_nb.core import ISMTS
from prism_nb.bench import peak_gflops
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'tests'))  # the frozen reference is the tests' too
from reference_backbones import GRUDReference, mTANDReference

REFERENCES = {'mtand': mTANDReference, 'grud': GRUDReference}
N_TRAIN, BATCH, L, D, N_CLASSES = 5910, 64, 128, 6, 6


def harc_like_batch(seed: int = 0) -> ISMTS:
    g = torch.Generator().manual_seed(seed)
    m = (torch.rand(BATCH, L, D, generator=g) < .2).float()
    t = (torch.rand(BATCH, L, generator=g) + .5).cumsum(1) / 50  # increasing, irregular gaps around 20 ms
    y = torch.arange(BATCH) % N_CLASSES
    return ISMTS(torch.randn(BATCH, L, D, generator=g) * m, m, t, y, y % 4)


def with_reference(algo, attrs, name):
    "Swap the encoders named `attrs` of `algo` for the old implementation with the same weights."
    for attr in attrs:
        old = REFERENCES[name](D, L)
        old.load_state_dict(getattr(algo, attr).state_dict())
        setattr(algo, attr, old)
    return algo


def erm(name: str, old: bool):
    torch.manual_seed(0)
    algo = make_algorithm('erm', n_features=D, seq_len=L, n_classes=N_CLASSES, n_domains=4, backbone=name)
    if old:
        with_reference(algo, ['featurizer'], name)
        algo.optimizer = algo.make_optimizer()
    return algo


def prism(name: str, old: bool):
    torch.manual_seed(0)
    algo = make_algorithm('prism', n_features=D, seq_len=L, n_classes=N_CLASSES, n_domains=4, backbone=name)
    algo.drop_decoders()  # training proper, after pretraining; the optimizer is built at the first step
    return with_reference(algo, ['E_feat', 'E_samp'], name) if old else algo


def median_steps(algos: list, batch: ISMTS, steps: int, warmup: int) -> list:
    "Median (wall, CPU) seconds of `algo.update(batch)` per algo, the algos' steps alternated (in turn first)."
    times = [[] for _ in algos]
    for i in range(warmup + steps):
        order = list(range(len(algos)))
        for j in order[i % len(order):] + order[:i % len(order)]:
            wall, cpu = time.perf_counter(), time.process_time()
            algos[j].update(batch)
            if i >= warmup: times[j].append((time.perf_counter() - wall, time.process_time() - cpu))
    return [(statistics.median(w for w, _ in ts), statistics.median(c for _, c in ts)) for ts in times]


def main(args):
    rows = []
    batch = harc_like_batch()
    steps_per_epoch = N_TRAIN / BATCH
    for threads in args.threads:
        torch.set_num_threads(threads)
        gflops = peak_gflops(torch.device('cpu'))
        print(f'\n{threads} thread(s), peak {gflops:.0f} GFLOP/s; epoch = {N_TRAIN} windows = {steps_per_epoch:.1f} steps of {BATCH}; '
              f'medians of {args.steps} steps (CPU: process time, summed over threads)')
        print(f"{'backbone':<8} {'MFLOP/win':>9} {'floor s/ep':>10} {'old s/step':>10} {'new s/step':>10} {'speedup':>7} "
              f"{'old s/ep':>8} {'new s/ep':>8} {'old/floor':>9} {'new/floor':>9} {'old CPU s':>9} {'new CPU s':>9}"
              + (f" {'PRISM/ERM old':>13} {'new':>5}" if args.prism else ''))
        for name in REFERENCES:
            flops = count_flops(make_backbone(name, D, L), L, D)
            floor = 3 * flops * N_TRAIN / (gflops * 1e9)
            (old_step, old_cpu), (new_step, new_cpu) = median_steps([erm(name, True), erm(name, False)], batch, args.steps, warmup=3)
            row = (f'{BACKBONE_DISPLAY[name]:<8} {flops / 1e6:>9.2f} {floor:>10.2f} {old_step:>10.4f} {new_step:>10.4f} '
                   f'{old_step / new_step:>6.1f}x {old_step * steps_per_epoch:>8.2f} {new_step * steps_per_epoch:>8.2f} '
                   f'{old_step * steps_per_epoch / floor:>8.1f}x {new_step * steps_per_epoch / floor:>8.1f}x {old_cpu:>9.4f} {new_cpu:>9.4f}')
            if args.prism:
                (old_prism, _), (new_prism, _) = median_steps([prism(name, True), prism(name, False)], batch, args.prism_steps, warmup=1)
                row += f' {old_prism / old_step:>12.1f}x {new_prism / new_step:>4.1f}x'
            print(row, flush=True)
            rows.append(dict(backbone=BACKBONE_DISPLAY[name], threads=threads, mflops_per_window=round(flops / 1e6, 2),
                             floor_s_per_epoch=round(floor, 2), before_s_per_epoch=round(old_step * steps_per_epoch, 2),
                             after_s_per_epoch=round(new_step * steps_per_epoch, 2), speedup=round(old_step / new_step, 2),
                             before_x_floor=round(old_step * steps_per_epoch / floor, 2), after_x_floor=round(new_step * steps_per_epoch / floor, 2),
                             **(dict(prism_x_erm_before=round(old_prism / old_step, 2), prism_x_erm_after=round(new_prism / new_step, 2))
                                if args.prism else {})))
    if args.out:
        import pandas as pd
        from prism_nb.report import save_table
        save_table(pd.DataFrame(rows), args.out, formats=('md', 'csv'), index=False)
        print(f'wrote {args.out}.md and {args.out}.csv')


if __name__ == '__main__':
    main(ARGS)
