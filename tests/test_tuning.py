"""The random hyperparameter search (nbs/20_tuning.ipynb): a draw is the same in any process; a plugin method's
own distribution is searched; a tuned run scores both HAR-C protocols and its oracle share, exactly."""
import json, os, subprocess, sys
from pathlib import Path

from prism_nb.algorithms import draw_hparams, method_names
from prism_nb.config import make_config, record_path
from prism_nb.records import read_record
from prism_nb.tuning import PROTOCOLS, oracle_share, search_configs, search_overrides

ROOT = Path(__file__).resolve().parent.parent
DRAWS = range(0, 6)


def draws_in_new_process(seed_env: str) -> dict:
    "Every built-in method's draws 0-5, computed in a fresh interpreter with its own PYTHONHASHSEED."
    code = ('import json, prism_nb; from prism_nb.algorithms import draw_hparams, method_names; '
            f'print(json.dumps({{m: [draw_hparams(m, d) for d in {list(DRAWS)}] for m in method_names()}}))')
    env = {**os.environ, 'PYTHONHASHSEED': seed_env}
    out = subprocess.run([sys.executable, '-c', code], cwd=ROOT, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_draws_are_the_same_in_two_processes():
    a, b = draws_in_new_process('1'), draws_in_new_process('2')
    assert len(a) == 14 and set(a) <= set(method_names())  # the built-ins (other tests may add methods here)
    assert a == b
    here = {m: [draw_hparams(m, d) for d in DRAWS] for m in a}
    assert json.loads(json.dumps(here)) == a  # and the same as in this process
    assert all(ds[0] == {} for ds in a.values())  # draw 0: the defaults
    assert all(ds[1] != ds[2] for ds in a.values())


PLUGIN = '''
from prism_nb.algorithms import ERM, register_algorithm, choice

@register_algorithm('SmoothedERM')
class SmoothedERM(ERM):
    "ERM with a knob of its own, searched by its own distribution."
    @classmethod
    def defaults(cls): return {**super().defaults(), 'smoothing': 0.0}
    @classmethod
    def hparam_space(cls): return {**super().hparam_space(), 'smoothing': (0.0, 0.5)}
    @classmethod
    def search_space(cls): return {**super().search_space(), 'smoothing': choice(0.0, 0.05, 0.1, 0.2)}
'''


def test_a_plugin_methods_distribution_is_searched(tmp_path):
    (tmp_path / 'smoothed.py').write_text(PLUGIN)
    plugin = str(tmp_path / 'smoothed.py')  # a relative path would be read from the repository root
    code = (f'import json; from prism_nb.core import load_plugins; load_plugins([{plugin!r}]); '
            'from prism_nb.tuning import search_configs; '
            'print(json.dumps([c["hparams"] for c in search_configs(["smoothederm"], draws=range(1, 13), seeds=[0])]))')
    out = subprocess.run([sys.executable, '-c', code], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    hps = json.loads(out.stdout.strip().splitlines()[-1])
    assert len(hps) == 12 and all(set(h) == {'weight_decay', 'smoothing'} for h in hps)
    assert {h['smoothing'] for h in hps} <= {0.0, 0.05, 0.1, 0.2} and len({h['smoothing'] for h in hps}) > 1


def test_a_tuned_run_scores_both_protocols_and_its_oracle_share(train_quick):
    quick = search_configs(['erm'], draws=[2], seeds=[0], max_windows=120, epochs=1)[0]
    _, rec, path = train_quick(quick)
    assert path.name.startswith('erm_cnn_h2_s0_') and read_record(path)['id'] == rec['id']
    assert set(rec['metrics']) == set(PROTOCOLS['harc']) | set(PROTOCOLS['harc_ps'])
    share = oracle_share(rec['data']['n_test'], 0)
    n_o, n = int(share.sum()), len(share)
    for cond, acc in rec['metrics'].items():  # the whole set is the two shares, weighted by their windows
        o, r = rec['split_metrics']['oracle'][cond], rec['split_metrics']['report'][cond]
        assert abs(acc - (n_o * o + (n - n_o) * r) / n) < 1e-4, cond
    lo, hi = search_overrides('erm', 2)['lr'], rec['config']['lr']
    assert lo == hi and rec['config']['hparams'] == search_overrides('erm', 2)['hparams']


def test_a_config_cannot_claim_a_draw_it_did_not_run():
    import pytest
    from prism_nb.core import ConfigError
    cfg = search_configs(['irm'], draws=[3], seeds=[1])[0]
    with pytest.raises(ConfigError, match='draw 3 of irm sets'):
        make_config(**{**cfg, 'hparams': {**cfg['hparams'], 'irm_lambda': 1.0}})
    assert record_path(cfg, 'results').parent.name == 'harc_tuned'
