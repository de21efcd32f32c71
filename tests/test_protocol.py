"""The tuning protocol for anyone's method, end to end at its smoke size on the example plugin's SpecDecoup, as a
user runs it: the `prism_protocol` command in a fresh process (search, recipe chosen by the rule, fresh seed, tables
written); a second call trains nothing (resumable)."""
import subprocess, sys
from pathlib import Path

PLUGIN = str(Path(__file__).resolve().parent.parent / 'examples' / 'prism_nb_example' / 'prism_nb_example')
CLI = Path(sys.executable).with_name('prism_protocol')  # the console script `pip install` puts beside python


def protocol(tmp_path):
    "The one command, in its own process (the plugin registers its method there, as in a user's shell)."
    cmd = [str(CLI), 'specdecoup', '--plugins', PLUGIN, '--quick', '--workers', '1',
           '--results_dir', str(tmp_path)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_protocol_end_to_end(tmp_path):
    out = protocol(tmp_path)
    assert 'specdecoup: search, 3 runs (2 draws x 1 trial seeds)' in out and 'specdecoup: recipe = draw ' in out
    draw = int(out.split('specdecoup: recipe = draw ')[1].split()[0])
    assert draw in (0, 1)
    stems = sorted(p.name.rsplit('_', 1)[0] for p in (tmp_path / 'harc_fresh').glob('*.json'))
    assert stems == [f'specdecoup_cnn_h{draw}_s10']  # the recipe at the first fresh seed, nothing else
    assert len(list((tmp_path / 'harc_tuned').glob('*.json'))) == 1  # draw 1, trial seed 0
    for protocol_name in ('harc', 'harc_ps'):
        table = (tmp_path / 'protocol' / f'specdecoup_{protocol_name}.md').read_text()
        assert '| SpecDecoup |' in table
    stamps = {p: p.stat().st_mtime_ns for p in tmp_path.rglob('*.json')}
    protocol(tmp_path)
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob('*.json')} == stamps  # nothing retrained
