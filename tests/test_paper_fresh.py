"""nbs/paper.ipynb is committed with its outputs (tables and figures readable without running anything); this test
re-executes it on the committed records and fails when a committed output, or a committed table under tables/, is
not what the records give now."""
import os, subprocess, sys
from pathlib import Path
import nbformat

TEXT_KINDS = ('text/plain', 'text/html', 'text/markdown')

def visible(cell) -> list:
    "What a reader sees of a code cell: printed text, the text forms of rich outputs, and how many images."
    out = []
    for o in cell.get('outputs', []):
        if o['output_type'] == 'stream' and o['name'] == 'stdout': out.append(('stdout', o['text']))
        elif o['output_type'] in ('execute_result', 'display_data'):
            data = o.get('data', {})
            out += [(k, data[k] if isinstance(data[k], str) else ''.join(data[k])) for k in TEXT_KINDS if k in data
                    if not (k == 'text/plain' and 'image/png' in data)]  # a figure's text form holds its memory address
            out += [('image', 'png')] if 'image/png' in data else []
        elif o['output_type'] == 'error': out.append(('error', o['ename']))
    return out

def test_paper_outputs_match_the_records(root, tmp_path):
    fresh = tmp_path / 'paper.ipynb'
    subprocess.run([sys.executable, '-m', 'papermill', str(root / 'nbs' / 'paper.ipynb'), str(fresh), '--cwd', str(root / 'nbs'),
                    '-p', 'tables_dir', str(tmp_path / 'tables'), '-p', 'figures_dir', str(tmp_path / 'figures')],
                   check=True, capture_output=True, env={k: v for k, v in os.environ.items() if k != 'MPLBACKEND'})  # Agg would hide the figures
    committed = nbformat.read(root / 'nbs' / 'paper.ipynb', as_version=4)
    new = nbformat.read(fresh, as_version=4)
    code = lambda nb: [c for c in nb.cells if c.cell_type == 'code' and 'injected-parameters' not in c.metadata.get('tags', [])]
    assert [c.source for c in code(committed)] == [c.source for c in code(new)]
    stale = [i for i, (a, b) in enumerate(zip(code(committed), code(new))) if visible(a) != visible(b)]
    assert not stale, (f'paper.ipynb outputs are stale in code cells {stale} (first: {code(committed)[stale[0]].source[:200]!r}); '
                       'rerun `papermill nbs/paper.ipynb nbs/paper.ipynb --cwd nbs` and `nbdev_clean`')
    assert any(visible(c) for c in code(committed)), 'paper.ipynb is committed without outputs'
    for made in sorted((tmp_path / 'tables').iterdir()):
        if made.suffix in ('.csv', '.md'):
            assert (root / 'tables' / made.name).read_text() == made.read_text(), f'tables/{made.name} is stale: rerun paper.ipynb'
