"""Render README.md from nbs/index.ipynb: markdown cells as they are, visible code cells as python blocks, and
the Markdown outputs of `#| echo: false` cells (numbers computed from the records) in their place.
(nbdev_readme needs Quarto, which is not installable from the package registries here.)
Links and images in the notebook are relative to nbs/ (`../tables/harc.md`, `../figures/x.png`), so that they work in
JupyterLab; in README.md, which sits at the repository's root, they lose the leading `../`."""
import json, re, sys
from pathlib import Path

from _cli import parser

root = Path(__file__).resolve().parent.parent

def echo_false_outputs(cell) -> str:
    "The Markdown (or plain text) a hidden-source cell displayed."
    parts = []
    for o in cell.get('outputs', []):
        data = o.get('data', {})
        if 'text/markdown' in data: parts.append(''.join(data['text/markdown']).strip())
        elif o.get('output_type') == 'stream' and o.get('name') == 'stdout': parts.append(''.join(o['text']).strip())
    return '\n\n'.join(p for p in parts if p)

def render(nb) -> str:
    parts = []
    for c in nb['cells']:
        src = ''.join(c['source']).strip()
        if not src: continue
        if c['cell_type'] == 'markdown': parts.append(src)
        elif c['cell_type'] == 'code' and src.startswith(('#| echo: false', '#|echo: false')):
            out = echo_false_outputs(c)
            if out: parts.append(out)
        elif c['cell_type'] == 'code' and not src.startswith(('#| hide', '#|hide')):
            parts.append('```python\n' + src + '\n```')
    text = '<!-- generated from nbs/index.ipynb by tools/render_readme.py: edit the notebook, not this file -->\n\n' + '\n\n'.join(parts) + '\n'
    return from_root(text)

def from_root(md: str) -> str:
    "Markdown links and images relative to nbs/ (`](../tables/harc.md)`) made relative to the repository's root."
    return re.sub(r'\]\(\.\./(?!\.\./)', '](', md)

if __name__ == '__main__':
    ap = parser(__doc__)
    ap.add_argument('-v', '--verbose', action='store_true', help='also print the README')
    args = ap.parse_args(sys.argv[1:])
    text = render(json.loads((root / 'nbs' / 'index.ipynb').read_text()))
    (root / 'README.md').write_text(text)
    if args.verbose: print(text)
