"""Execute nbs/index.ipynb (its outputs are the README's numbers) and nbs/results.ipynb (the results page) in place,
clean them, and render README.md. Name one of them to refresh only that one: python tools/refresh_index.py [index|results]"""
import subprocess, sys
from pathlib import Path
root = Path(__file__).resolve().parent.parent
for name in sys.argv[1:] or ['index', 'results']:
    nb = root / 'nbs' / f'{name}.ipynb'
    subprocess.run([sys.executable, '-m', 'papermill', str(nb), str(nb), '--cwd', str(root / 'nbs')], check=True, capture_output=True)
    subprocess.run(['nbdev_clean', '--fname', str(nb)], cwd=root, check=True)
subprocess.run([sys.executable, str(root / 'tools' / 'render_readme.py')], check=True)
