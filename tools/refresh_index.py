"""Execute nbs/index.ipynb (its outputs are the README's numbers) and nbs/results.ipynb (the results page) in place,
clean them, and render README.md. Name one of them to refresh only that one: python tools/refresh_index.py [index|results]"""
import subprocess, sys
from pathlib import Path

from _cli import parser

root = Path(__file__).resolve().parent.parent
ap = parser(__doc__)
ap.add_argument('names', nargs='*', metavar='index|results', help='the notebooks to refresh (default: both)')
names = ap.parse_args(sys.argv[1:]).names
odd = [n for n in names if n not in ('index', 'results')]
if odd:
    ap.error(f'no such notebook to refresh: {odd}; choose from index, results')
for name in names or ['index', 'results']:
    nb = root / 'nbs' / f'{name}.ipynb'
    subprocess.run([sys.executable, '-m', 'papermill', str(nb), str(nb), '--cwd', str(root / 'nbs')], check=True, capture_output=True)
    subprocess.run(['nbdev_clean', '--fname', str(nb)], cwd=root, check=True)
subprocess.run([sys.executable, str(root / 'tools' / 'render_readme.py')], check=True)
