"""Execute nbs/index.ipynb in place (its outputs are the README's numbers), clean it, and render README.md."""
import subprocess, sys
from pathlib import Path
root = Path(__file__).resolve().parent.parent
nb = root / 'nbs' / 'index.ipynb'
subprocess.run([sys.executable, '-m', 'papermill', str(nb), str(nb), '--cwd', str(root / 'nbs')], check=True, capture_output=True)
subprocess.run(['nbdev_clean', '--fname', str(nb)], cwd=root, check=True)
subprocess.run([sys.executable, str(root / 'tools' / 'render_readme.py')], check=True)
