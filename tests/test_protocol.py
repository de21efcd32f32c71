"""The tuning protocol for anyone's method, end to end at its smoke size on the example plugin's SpecDecoup:
search, recipe chosen by the rule, fresh seed, tables written; a second call trains nothing (resumable)."""
from pathlib import Path

from prism_nb.config import record_path
from prism_nb.verdict import FRESH_SEEDS, QUICK, protocol_configs, recipe_configs, run_protocol

PLUGIN = str(Path(__file__).resolve().parent.parent / 'examples' / 'prism_nb_example' / 'prism_nb_example')


def test_protocol_end_to_end(tmp_path):
    out = run_protocol('specdecoup', plugins=[PLUGIN], quick=True, workers=1, results_dir=tmp_path,
                       progress=False)
    search = protocol_configs('specdecoup', draws=(0, 1), trial_seeds=[0], **QUICK)
    assert all(record_path(c, tmp_path).exists() for c in search)
    draw = int(out['choice']['draw'])
    assert draw in (0, 1)
    fresh = recipe_configs({'specdecoup': draw}, FRESH_SEEDS[:1], **QUICK)
    assert record_path(fresh[0], tmp_path).exists()
    for protocol in ('harc', 'harc_ps'):
        table = out['tables'][protocol]
        assert list(table.index) == ['SpecDecoup'] and table.loc['SpecDecoup', 'seeds'] == 1
        assert (tmp_path / 'protocol' / f'specdecoup_{protocol}.md').exists()
    stamps = {p: p.stat().st_mtime_ns for p in tmp_path.rglob('*.json')}
    run_protocol('specdecoup', plugins=[PLUGIN], quick=True, workers=1, results_dir=tmp_path, progress=False)
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob('*.json')} == stamps  # nothing retrained
