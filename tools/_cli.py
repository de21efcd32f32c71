"""What the scripts of tools/ share on their command line: one argparse parser that refuses an unknown or
abbreviated flag (`allow_abbrev=False`: `--pla` is not taken for `--plan`), counts checked as they are read,
and the results folder named when it, or a folder a script reads, is missing. Everything here is standard
library only, so a command line is refused before the script imports torch or prism_nb and before any work."""
import argparse, os, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def parser(doc: str) -> argparse.ArgumentParser:
    "A parser described by the first paragraph of the script's docstring `doc`, taking no abbreviated flag."
    return argparse.ArgumentParser(description=doc.split('\n\n')[0], allow_abbrev=False,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)


def count(text: str) -> int:
    "An argparse type: a whole number of at least 1 (workers, draws, steps, threads)."
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'{text!r} is not a whole number') from None
    if n < 1:
        raise argparse.ArgumentTypeError(f'must be at least 1, got {n}')
    return n


def results_folder(*needs: str, why: str = '') -> Path:
    "$PRISM_RESULTS or <repo>/results, exiting (status 1, naming it) if it or a subfolder in `needs` is missing."
    results = Path(os.environ.get('PRISM_RESULTS', ROOT / 'results'))
    for folder in (results, *(results / n for n in needs)):
        if not folder.is_dir():
            what = 'no results folder' if folder == results else 'no records under'
            sys.exit(f"{what} {folder}{': ' + why if why else ''} (set PRISM_RESULTS to another results folder)")
    return results


def cluster_options(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    "Add --scheduler (a Dask scheduler's address) and --slurm (a Slurm partition, via submitit) to `p`."
    g = p.add_mutually_exclusive_group()
    g.add_argument('--scheduler', metavar='ADDRESS', help="run on a Dask cluster (e.g. tcp://10.0.0.1:8786)")
    g.add_argument('--slurm', metavar='PARTITION', help='submit one Slurm job per run (submitit)')
    return p


def executor(args, results: Path):
    "The executor the cluster options name (prism_nb.protocol.executor_from), or None: local workers."
    if not (args.scheduler or args.slurm):
        return None
    from prism_nb.protocol import executor_from
    return executor_from(args.scheduler, args.slurm, results)


def workers_arg(p: argparse.ArgumentParser, what: str = 'papermill workers') -> argparse.ArgumentParser:
    "Add the optional positional `workers` (a count, default 2) that the run scripts take, to `p`."
    p.add_argument('workers', nargs='?', type=count, default=2, help=f'{what} of one torch thread')
    return p


def print_plan(stages, results: Path, cost: dict):
    "One line per stage `(name, configs, workers, threads)`: runs, runs left, CPU hours left by `cost` (s per method)."
    from prism_nb.config import record_path
    for name, cfgs, workers, threads in stages:
        left = [c for c in cfgs if not record_path(c, results).exists()]
        cpu_h = sum(cost.get(c['method'], 0.0) for c in left) / 3600
        print(f'{name}: {len(cfgs)} runs, {len(left)} left, about {cpu_h:.1f} CPU hours left '
              f'({cpu_h / workers:.1f} h wall-clock on {workers} worker(s) of {threads} thread(s))', flush=True)


def report_sweep(name: str, out: dict, started: float):
    "A sweep's closing lines: trained, skipped and failed runs (each failure's last 300 characters)."
    import time
    print(f"{name}: {len(out['done'])} trained, {len(out['skipped'])} had records, {len(out['failed'])} failed "
          f'in {time.time() - started:.0f} s', flush=True)
    for run_name, err in out['failed']:
        print(f'  FAILED {run_name}: {err[-300:]}', flush=True)


def search_cpu_seconds(results: Path) -> dict:
    "Method -> the search's (harc_tuned) mean CPU seconds per run: what the plans price each run at."
    from prism_nb.records import read_records
    cost = {}
    for r in read_records(results / 'harc_tuned'):
        cost.setdefault(r['config']['method'], []).append(r['timing']['process_cpu_seconds'])
    return {m: sum(v) / len(v) for m, v in cost.items()}
