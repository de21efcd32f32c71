"""Execute the library notebooks (nbs/NN_*.ipynb) the way nbdev_test does and keep what they show: show_doc for the
public API, figures, small tables and examples, so a reader sees them in JupyterLab and on the docs site without
running anything. Left out: stderr (progress bars, warnings), and every output of a cell marked `#| output: false`
(cells whose output changes from run to run: timings, temporary paths). Cells nbdev_test skips stay empty.

    python tools/render_outputs.py [NOTEBOOK ...]   # then: nbdev_clean

tests/test_notebook_outputs.py checks the result without executing anything."""
import json, os, subprocess, sys, time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

root = Path(__file__).resolve().parent.parent
nbs = root / 'nbs'

def library_notebooks() -> list:
    "The numbered library notebooks, in reading order."
    return sorted(p for p in nbs.glob('[0-9][0-9]*.ipynb') if p.stem[2] in '_abcdefgh')

def hides_output(cell) -> bool:
    "Whether a cell carries `#| output: false`: its output changes from run to run and is never committed."
    return any(line.replace(' ', '').lower() == '#|output:false' for line in ''.join(cell['source']).splitlines()
               if line.lstrip().startswith('#|'))

def kept(output) -> bool:
    "Outputs worth committing: everything but stderr."
    return not (output['output_type'] == 'stream' and output.get('name') == 'stderr')

def _execute(path: Path) -> None:
    "Run one notebook as nbdev_test does (same skipped cells, its folder as working directory) and write its outputs."
    from fastcore.xtras import working_directory
    from nbdev.config import get_config
    from nbdev.frontmatter import FrontmatterProc
    from nbdev.process import NBProcessor
    from execnb.shell import CaptureShell
    flags = set(get_config().tst_flags.split())

    def skip(cell):  # nbdev.test.test_nb's rule
        if cell.cell_type != 'code' or 'nbdev_export(' in cell.source: return True
        directives = getattr(cell, 'directives_', {}) or {}
        return directives.get('eval:', [''])[0].lower() == 'false' or bool(flags & directives.keys())

    nb = NBProcessor(path, procs=FrontmatterProc, process=True).nb
    shell = CaptureShell(path)
    with working_directory(path.parent): shell.run_all(nb, exc_stop=True, preproc=skip)
    raw = json.loads(path.read_text())
    # the title cell becomes a raw frontmatter cell without an id; every other cell keeps its id and type
    same = lambda a, b: b.get('id') is None or (b.id == a.get('id') and b.cell_type == a['cell_type'])
    assert len(raw['cells']) == len(nb.cells) and all(map(same, raw['cells'], nb.cells)), f'{path.name}: cells moved while executing'
    for cell, ran in zip(raw['cells'], nb.cells):
        if cell['cell_type'] != 'code': continue
        outputs = [json.loads(json.dumps(o, default=dict)) for o in ran.get('outputs', [])]
        cell['outputs'] = [] if hides_output(cell) else [o for o in outputs if kept(o)]
    path.write_text(json.dumps(raw, indent=1, ensure_ascii=False) + '\n')

def render(paths: list, workers: int = 2) -> list:
    "Execute `paths` in `workers` fresh interpreters; returns the names of those that failed."
    env = {**os.environ, 'MPLBACKEND': 'Agg'}
    def one(p):
        start = time.time()
        done = subprocess.run([sys.executable, __file__, '--one', str(p)], env=env, capture_output=True, text=True)
        print(f'{p.name}: {"ok" if done.returncode == 0 else "FAILED"} ({time.time() - start:.0f} s)', flush=True)
        if done.returncode: print(done.stderr[-3000:], file=sys.stderr)
        return done.returncode
    with ThreadPoolExecutor(workers) as pool: codes = list(pool.map(one, paths))
    return [p.name for p, c in zip(paths, codes) if c]

if __name__ == '__main__':
    args = sys.argv[1:]
    if args[:1] == ['--one']: _execute(Path(args[1])); sys.exit(0)
    paths = [nbs / Path(a).with_suffix('.ipynb').name for a in args] or library_notebooks()
    missing = [p.name for p in paths if not p.exists()]
    if missing: sys.exit(f'no such notebook in nbs/: {missing}')
    failed = render(paths)
    if failed: sys.exit(f'failed: {failed} (their outputs were left as they were)')
    print('now run: nbdev_clean')
