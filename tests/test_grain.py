"""The fastcore grain (issue 62): an exported cell holds one definition with its paragraph before it, short enough to
read at a glance. Measured as the issue measures it: the non-blank lines after a cell's `#| export` line. No
exported cell of any notebook is over 40 lines, and each defines at most one top-level function or class
(constants beside their one definition are fine). The median over every notebook is at most 12 (printed with `pytest -s`)."""
import ast, json, statistics
from pathlib import Path

import pytest

NBS = Path(__file__).resolve().parent.parent / 'nbs'
MAX_LINES = 40


def exported_cells(path: Path) -> list:
    "The sources of `path`'s exported code cells (those that start with `#| export`)."
    cells = json.loads(path.read_text())['cells']
    sources = [''.join(c['source']) for c in cells if c['cell_type'] == 'code']
    return [s for s in sources if s.lstrip().startswith('#| export')]


# every notebook with exported cells, a new one too (17_build_on_it's walkthrough steps run in unexported cells)
NOTEBOOKS = sorted(p.stem for p in NBS.glob('*.ipynb') if exported_cells(p))


def size(source: str) -> int:
    "Non-blank lines after the `#| export` line."
    return sum(1 for line in source.lstrip().splitlines()[1:] if line.strip())


def definitions(source: str) -> list:
    "The names of the top-level functions and classes a cell defines."
    tree = ast.parse(source)
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return [node.name for node in tree.body if isinstance(node, kinds)]


def test_the_median_is_at_most_12_and_no_cell_is_over_40():
    sizes = [size(s) for p in sorted(NBS.glob('*.ipynb')) for s in exported_cells(p)]
    print(f'exported cells: {len(sizes)}, median {statistics.median(sizes)} non-blank lines, max {max(sizes)}, '
          f'{sum(n > MAX_LINES for n in sizes)} over {MAX_LINES}')
    assert statistics.median(sizes) <= 12 and max(sizes) <= MAX_LINES, (statistics.median(sizes), max(sizes))


@pytest.mark.parametrize('stem', NOTEBOOKS)
def test_no_exported_cell_is_over_40_lines(stem):
    long = [(size(s), s.lstrip().splitlines()[1][:60]) for s in exported_cells(NBS / f'{stem}.ipynb')
            if size(s) > MAX_LINES]
    assert not long, f'{stem}: exported cells over {MAX_LINES} non-blank lines: {long}'


@pytest.mark.parametrize('stem', NOTEBOOKS)
def test_one_definition_per_exported_cell(stem):
    many = [names for names in map(definitions, exported_cells(NBS / f'{stem}.ipynb')) if len(names) > 1]
    assert not many, f'{stem}: exported cells defining more than one function or class: {many}'


def test_the_measures_read_a_cell_as_the_issue_does():
    cell = '#| export\nX = 1\n\ndef f():\n    return X\n\n\nclass C: pass\n'
    assert size(cell) == 4 and definitions(cell) == ['f', 'C']
