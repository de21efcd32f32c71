"""Execute the library notebooks (nbs/NN_*.ipynb) in ipykernel, as JupyterLab runs them (nbclient, the
notebook's folder as working directory, figures as a plain kernel draws them), skipping the cells nbdev_test skips,
and keep what they show: show_doc for the public API, figures, small tables and examples, so a reader sees them in
JupyterLab and on the docs site without running anything. What is left out is what prism_nb's JupyterLab
pre-save hook leaves out when a notebook is saved there (`prism_nb.jupyter.clean_outputs`): stderr (progress bars,
warnings), every output of a cell marked `#| output: false` (cells whose output changes from run to run: timings,
temporary paths) and of the cells nbdev_test skips; the pieces of a stream are joined as JupyterLab joins them.
So a notebook run and saved in JupyterLab with the hook installed (python -m prism_nb.jupyter install) is left
as committed.

    python tools/render_outputs.py [NOTEBOOK ...]   # names in nbs/ or paths; then: nbdev_clean

tests/test_notebook_outputs.py checks the result without executing anything; tests/test_jupyter_hooks.py checks
that JupyterLab leaves it as it is."""
import argparse, os, subprocess, sys, time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from _cli import parser

root = Path(__file__).resolve().parent.parent
nbs = root / 'nbs'

def library_notebooks() -> list:
    "The numbered library notebooks, in reading order."
    return sorted(p for p in nbs.glob('[0-9][0-9]*.ipynb') if p.stem[2] in '_abcdefgh')

def hides_output(cell) -> bool:
    "Whether a cell carries `#| output: false`: its output changes from run to run and is never committed."
    from prism_nb.jupyter import hides_output
    return hides_output(cell)

def kernel_env() -> dict:
    "The environment a kernel JupyterLab starts gets: no MPLBACKEND (ipykernel then draws inline, as a plain kernel)."
    return {k: v for k, v in os.environ.items() if k != 'MPLBACKEND'}

def execute(path: Path, timeout: int = 1800) -> dict:
    "Run notebook `path` in ipykernel as JupyterLab would, skipping the cells nbdev_test skips: the notebook run."
    import nbformat
    from nbclient import NotebookClient
    from nbdev.config import get_config
    from prism_nb.jupyter import skipped
    flags = get_config().tst_flags.split()

    class Client(NotebookClient):
        async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
            if cell.cell_type == 'code' and skipped(cell, flags): return cell
            return await super().async_execute_cell(cell, cell_index, execution_count, store_history)

    nb = nbformat.read(path, as_version=4)
    os.environ.pop('MPLBACKEND', None)  # the kernel inherits this process's environment
    Client(nb, timeout=timeout, kernel_name='python3', record_timing=False,
           resources={'metadata': {'path': str(path.parent)}}).execute()
    return nb

def _execute(path: Path) -> None:
    "Execute one notebook and write it with what it shows, less what the pre-save hook leaves out."
    import nbformat
    from prism_nb.jupyter import clean_outputs
    from nbdev.config import get_config
    nb = clean_outputs(execute(path), get_config().tst_flags.split())
    nbformat.write(nb, path)

def render(paths: list, workers: int = 2) -> list:
    "Execute `paths` in `workers` fresh interpreters; returns the names of those that failed."
    env = kernel_env()
    def one(p):
        start = time.time()
        done = subprocess.run([sys.executable, __file__, '--one', str(p)], env=env, capture_output=True, text=True)
        print(f'{p.name}: {"ok" if done.returncode == 0 else "FAILED"} ({time.time() - start:.0f} s)', flush=True)
        if done.returncode: print(done.stderr[-3000:], file=sys.stderr)
        return done.returncode
    with ThreadPoolExecutor(workers) as pool: codes = list(pool.map(one, paths))
    return [p.name for p, c in zip(paths, codes) if c]

if __name__ == '__main__':
    ap = parser(__doc__)
    ap.add_argument('notebooks', nargs='*', metavar='NOTEBOOK', help='names in nbs/ or paths (default: every library notebook)')
    ap.add_argument('--one', metavar='PATH', help=argparse.SUPPRESS)  # render() runs each notebook so, in its own process
    args = ap.parse_args(sys.argv[1:])
    if args.one:
        if args.notebooks: ap.error('--one takes one notebook and no other')
        _execute(Path(args.one)); sys.exit(0)
    paths = [Path(a) if Path(a).is_file() else nbs / Path(a).with_suffix('.ipynb').name for a in args.notebooks] or library_notebooks()
    missing = [p.name for p in paths if not p.exists()]
    if missing: sys.exit(f'no such notebook: {missing}')
    failed = render(paths)
    if failed: sys.exit(f'failed: {failed} (their outputs were left as they were)')
    print('now run: nbdev_clean')
