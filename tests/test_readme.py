"""The README's numbers are computed from the committed records: rerunning nbs/index.ipynb gives the outputs that
are committed in it (and hence in README.md); the same holds for the results page, nbs/results.ipynb. The README is
a front door: short, with a license and a citation file beside it."""
import json, re, subprocess, sys
import pytest
sys.path.insert(0, str(__import__('pathlib').Path(__file__).resolve().parent.parent / 'tools'))
from render_readme import echo_false_outputs, from_root

@pytest.mark.parametrize('name', ['index', 'results'])
def test_numbers_are_fresh(root, tmp_path, name):
    out = tmp_path / f'{name}.ipynb'
    subprocess.run([sys.executable, '-m', 'papermill', str(root / 'nbs' / f'{name}.ipynb'), str(out), '--cwd', str(root / 'nbs')],
                   check=True, capture_output=True)
    fresh = [echo_false_outputs(c) for c in json.loads(out.read_text())['cells'] if c['cell_type'] == 'code']
    committed = [echo_false_outputs(c) for c in json.loads((root / 'nbs' / f'{name}.ipynb').read_text())['cells'] if c['cell_type'] == 'code']
    assert any(committed), f'{name}.ipynb is committed without its outputs: run `python tools/refresh_index.py {name}`'
    for f, c in zip(fresh, committed):
        assert f == c, f'stale numbers in nbs/{name}.ipynb: rerun `python tools/refresh_index.py {name}`\n--- committed\n{c[:1500]}\n--- from the records\n{f[:1500]}'

def prose_words(md: str) -> int:
    "Words outside code blocks and table rows (a table's 'mean ± se' cell is three words of numbers, not prose)."
    md = re.sub(r'```.*?```', '', md, flags=re.S)
    return len(' '.join(l for l in md.split('\n') if not l.lstrip().startswith('|')).split())

def test_prose_words_counts_prose_only():
    assert prose_words('one two\n| a | 1 ± 2 |\n```sh\nx y z\n```\nthree') == 3

def test_readme_is_a_front_door(root):
    words = prose_words((root / 'README.md').read_text())
    assert words <= 1300, f'README.md has {words} words of prose: keep it a front door (at most 1,300) and move the rest to nbs/guide.ipynb or nbs/results.ipynb'
    for f in ['LICENSE', 'CITATION.cff']: assert (root / f).is_file(), f'{f} is missing'
    assert 'Apache License' in (root / 'LICENSE').read_text() and 'Version 2.0' in (root / 'LICENSE').read_text()

def test_readme_links_resolve(root):
    "Every relative link and image of the README names a file of the repository (they are written relative to nbs/ in index.ipynb)."
    import re
    text = (root / 'README.md').read_text()
    targets = [t.split('#')[0] for t in re.findall(r'\]\(([^)\s]+)\)', text) if not t.startswith(('http://', 'https://', '#'))]
    assert targets and all((root / t).exists() for t in targets), [t for t in targets if not (root / t).exists()]
    assert from_root('[a](../tables/harc.md) ![b](../figures/x.png) [c](https://x/../y)') == '[a](tables/harc.md) ![b](figures/x.png) [c](https://x/../y)'
