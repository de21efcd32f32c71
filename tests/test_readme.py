"""The README's numbers are computed from the committed records: rerunning nbs/index.ipynb gives the outputs that
are committed in it (and hence in README.md)."""
import json, subprocess, sys
sys.path.insert(0, str(__import__('pathlib').Path(__file__).resolve().parent.parent / 'tools'))
from render_readme import echo_false_outputs

def test_readme_numbers_are_fresh(root, tmp_path):
    out = tmp_path / 'index.ipynb'
    subprocess.run([sys.executable, '-m', 'papermill', str(root / 'nbs' / 'index.ipynb'), str(out), '--cwd', str(root / 'nbs')],
                   check=True, capture_output=True)
    fresh = [echo_false_outputs(c) for c in json.loads(out.read_text())['cells'] if c['cell_type'] == 'code']
    committed = [echo_false_outputs(c) for c in json.loads((root / 'nbs' / 'index.ipynb').read_text())['cells'] if c['cell_type'] == 'code']
    assert any(committed), 'index.ipynb is committed without its outputs: run `python tools/refresh_index.py`'
    for f, c in zip(fresh, committed):
        assert f == c, f'stale README numbers: rerun `python tools/refresh_index.py`\n--- committed\n{c[:1500]}\n--- from the records\n{f[:1500]}'
