"""Render README.md from nbs/index.ipynb: markdown cells as they are, visible code cells as python blocks.
(nbdev_readme needs Quarto, which is not installable from the package registries here.)"""
import json, sys
from pathlib import Path

root = Path(__file__).resolve().parent.parent
nb = json.loads((root / 'nbs' / 'index.ipynb').read_text())
parts = []
for c in nb['cells']:
    src = ''.join(c['source']).strip()
    if not src: continue
    if c['cell_type'] == 'markdown': parts.append(src)
    elif c['cell_type'] == 'code' and not src.startswith(('#| hide', '#|hide')):
        parts.append('```python\n' + src + '\n```')
text = '<!-- generated from nbs/index.ipynb by tests/render_readme.py: edit the notebook, not this file -->\n\n' + '\n\n'.join(parts) + '\n'
(root / 'README.md').write_text(text)
if '-v' in sys.argv: print(text)
