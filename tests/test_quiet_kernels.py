"""A papermill run the project starts (`run_command`, what `run_sweep` ships to its workers)
reports no notice of ipykernel's that the kernel's local TCP connection is unencrypted (issue 62:
noise on every run)."""
import json, os, shlex, subprocess, sys
from pathlib import Path

import pytest

from prism_nb.sweep import run_command

NOTICE = 'Kernel is running over TCP without encryption'
BIN = str(Path(sys.executable).parent)  # the papermill (and kernel python) beside this Python


def _tiny_notebook(folder: Path) -> Path:
    "A parameterised notebook of two cells, with cell ids (no nbformat warning of its own)."
    def cell(i, src, tags=()):
        return dict(cell_type='code', id=f'c{i}', metadata={'tags': list(tags)}, source=src,
                    outputs=[], execution_count=None)
    kernel = {'name': 'python3', 'display_name': 'Python 3', 'language': 'python'}
    nb = dict(cells=[cell(0, 'x = 1', ['parameters']), cell(1, 'print(x + 1)')],
              metadata={'kernelspec': kernel}, nbformat=4, nbformat_minor=5)
    fn = folder / 'tiny.ipynb'
    fn.write_text(json.dumps(nb))
    return fn


def _printed(out: Path) -> str:
    "What the executed notebook's cells printed."
    cells = json.loads(out.read_text())['cells']
    return ''.join(''.join(o.get('text', '')) for c in cells for o in c['outputs'])


def test_run_command_reports_no_tcp_notice(tmp_path):
    "The kernel prints the notice (else this test proves nothing); `run_command` reports it not."
    nb, out = _tiny_notebook(tmp_path), tmp_path / 'out.ipynb'
    cmd = f'papermill {shlex.quote(str(nb))} {shlex.quote(str(out))} -p x 3'
    env = {**os.environ, 'PATH': f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    raw = subprocess.run(shlex.split(cmd), cwd=tmp_path, capture_output=True, text=True, env=env)
    assert raw.returncode == 0, raw.stderr[-2000:]
    if NOTICE not in raw.stderr:
        pytest.skip("this ipykernel prints no notice of an unencrypted TCP connection")
    code, err = run_command(cmd, str(tmp_path), BIN)
    assert code == 0, err
    assert NOTICE not in err, err
    assert 'Executing notebook with kernel: python3' in err  # the rest of papermill's stderr kept
    assert _printed(out) == '4\n'  # the parameter reached the run
