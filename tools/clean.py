"""nbdev_clean, then the kernelspec JupyterLab writes: nbdev_clean sets the kernel's display name to its
name ('python3'), and JupyterLab, finding 'Python 3 (ipykernel)' on the ipykernel spec, rewrites it on
open and marks every notebook as modified. Run this instead of nbdev_clean before committing."""
import json, subprocess, sys
from pathlib import Path

root = Path(__file__).resolve().parent.parent
subprocess.run(['nbdev_clean'], cwd=root, check=True, stdout=subprocess.DEVNULL)
for nb in sorted((root / 'nbs').glob('*.ipynb')):
    text = nb.read_text()
    d = json.loads(text)
    spec = d.get('metadata', {}).get('kernelspec')
    if spec and spec.get('name') == 'python3' and spec.get('display_name') != 'Python 3 (ipykernel)':
        spec['display_name'] = 'Python 3 (ipykernel)'
        # the same layout nbdev_clean writes: one-space indent, a final newline
        nb.write_text(json.dumps(d, indent=1, ensure_ascii=False) + '\n')
