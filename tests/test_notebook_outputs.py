"""The library notebooks are committed with what they show (tools/render_outputs.py): these checks need no execution.
Every show_doc cell shows the documentation the library gives now (signature, docments, source line), nothing
on stderr, no error, no path of the machine that rendered it, and nothing under a cell marked `#| output: false`;
the same for the pages a reader meets first (paper, results, index)."""
import json, re, sys
from pathlib import Path
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'tools'))
from render_outputs import hides_output, library_notebooks

NOTEBOOKS = library_notebooks()
# the rendered pages that are not library notebooks: what a reader meets first
PAGES = [NOTEBOOKS[0].parent / f'{name}.ipynb' for name in ('paper', 'results', 'index')]
MACHINE_PATH = re.compile(r'/tmp/|/work/|/home/[^/\s]+/|\.venv/|site-packages')
SHOW_DOC = re.compile(r'^show_doc\(.+\)$')
IMPORTS_ONLY = re.compile(r'^(?:(?:from \S+ )?import .+|#.*|)$')

def cells(path):
    return [c for c in json.loads(path.read_text())['cells'] if c['cell_type'] == 'code']

def source(cell): return ''.join(cell['source'])

def text(output) -> str:
    if output['output_type'] == 'stream': return ''.join(output['text'])
    return ''.join(''.join(v) for k, v in output.get('data', {}).items() if k.startswith('text/'))

def module_of(path):
    "The module a notebook exports to (its `#| default_exp`)."
    for c in cells(path):
        m = re.search(r'^#\|\s*default_exp\s+(\S+)', source(c), re.M)
        if m: return m.group(1)

def test_every_library_notebook_is_found():
    assert len(NOTEBOOKS) >= 17 and all(module_of(p) for p in NOTEBOOKS), [p.name for p in NOTEBOOKS if not module_of(p)]

def test_hides_output_reads_the_directive():
    assert hides_output({'source': '#| output: false\nprint(1)'}) and hides_output({'source': ['#|output:false\n', 'x']})
    assert not hides_output({'source': 'x = 1  # output: false'}) and not hides_output({'source': '#| eval: false\nx'})

@pytest.mark.parametrize('path', NOTEBOOKS + PAGES, ids=lambda p: p.stem)
def test_committed_outputs_are_clean(path):
    for c in cells(path):
        where = f'{path.name}: {source(c)[:80]!r}'
        if hides_output(c): assert not c['outputs'], f'{where} is marked output: false but has outputs'
        for o in c['outputs']:
            assert o['output_type'] != 'error', f'{where} committed an error'
            assert not (o['output_type'] == 'stream' and o['name'] == 'stderr'), f'{where} committed stderr'
            assert not MACHINE_PATH.search(text(o) + ''.join(o.get('traceback', []))), f'{where} shows a path of the machine that ran it'

def test_the_machine_path_pattern_sees_what_it_must():
    assert MACHINE_PATH.search('/work/main/.venv/lib/python3.12/site-packages/scipy/stats/_resampling.py')
    assert MACHINE_PATH.search('File "/home/ana/prism_nb/x.py"') and MACHINE_PATH.search('/tmp/pytest-of-root/x')
    assert not MACHINE_PATH.search('results/harc_fresh/erm_cnn_h2_s27.json and nbs/22_verdict.ipynb')

def fresh_show_docs(path) -> dict:
    "Run only a notebook's definitions (exported cells, import cells) and its show_doc cells, in the shell the renderer uses."
    from execnb.shell import CaptureShell
    from fastcore.xtras import working_directory
    from nbdev.frontmatter import FrontmatterProc
    from nbdev.process import NBProcessor
    nb, shell, shown = NBProcessor(path, procs=FrontmatterProc, process=True).nb, CaptureShell(path), {}
    with working_directory(path.parent):
        for cell in nb.cells:
            if cell.cell_type != 'code': continue
            defines = (getattr(cell, 'directives_', {}) or {}).keys() & {'export', 'exports', 'exporti'}
            if SHOW_DOC.match(cell.source.strip()): shown[cell.id] = shell.run(cell.source)
            elif defines or all(IMPORTS_ONLY.match(line) for line in cell.source.splitlines()):
                shell.run(cell.source); assert shell.exc is None, f'{path.name}: {cell.source[:80]!r}: {shell.exc!r}'
    return shown

def markdown(outputs) -> list: return [''.join(o['data']['text/markdown']) for o in outputs if 'text/markdown' in o.get('data', {})]

@pytest.mark.parametrize('path', NOTEBOOKS, ids=lambda p: p.stem)
def test_show_doc_outputs_match_the_library(path):
    fresh = fresh_show_docs(path)
    assert fresh, f'{path.name} has no show_doc cell'
    committed = {c.get('id'): c for c in cells(path)}
    for cell_id, outputs in fresh.items():
        c = committed[cell_id]
        assert markdown(c['outputs']), f'{path.name}: {source(c)} is committed without its output (python tools/render_outputs.py)'
        assert markdown(c['outputs']) == markdown(outputs), f'{path.name}: {source(c)} is stale (python tools/render_outputs.py {path.stem})'
