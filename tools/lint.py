"""ruff on the exported package (the rules in pyproject.toml: lines of at most 100 characters, no `;` joins,
no undefined name), leaving out the two kinds of line nbdev writes itself: a module's docstring (the notebook's
one-line description) and its `__all__` list (nbdev wraps it at 120 characters).

    python tools/lint.py   # exit status 1 and one line per finding if any"""
import json, subprocess, sys
from pathlib import Path

from _cli import parser

ROOT = Path(__file__).resolve().parent.parent

def generated_lines(path: Path) -> set:
    "Line numbers nbdev writes itself in `path`: line 1 (the module docstring) and the `__all__` block."
    lines, out, inside = path.read_text().split('\n'), {1}, False
    for n, line in enumerate(lines, 1):
        if line.startswith('__all__ = '): inside = True
        if inside:
            out.add(n)
            if line.rstrip().endswith(']'): inside = False
    return out

def findings() -> list:
    "ruff's findings on prism_nb/ outside the lines nbdev generates."
    res = subprocess.run([sys.executable, '-m', 'ruff', 'check', '--output-format', 'json', 'prism_nb'],
                         cwd=ROOT, capture_output=True, text=True)
    if res.returncode not in (0, 1): raise SystemExit(f'ruff failed: {res.stderr}')
    skip = {}
    out = []
    for e in json.loads(res.stdout or '[]'):
        path = Path(e['filename'])
        if path not in skip: skip[path] = generated_lines(path)
        if e['location']['row'] not in skip[path]:
            out.append(f"{path.relative_to(ROOT)}:{e['location']['row']}: {e['code']} {e['message']}")
    return out

if __name__ == '__main__':
    parser(__doc__).parse_args(sys.argv[1:])  # no arguments: any is refused
    found = findings()
    print('\n'.join(found) or 'ruff: exported code clean (lines <= 100, no `;` joins, no undefined names)')
    sys.exit(1 if found else 0)
