"""The verdict's code refuses, or says "not assessed", where it cannot judge (issue 60): too few paired seeds, differences
without spread, non-finite scores, repeated or unequal seed sets, rows told apart by their display names, and a mend
recommended from part of its seeds or without its burst check. Every test here failed on the code before issue 60."""
import re

import numpy as np
import pandas as pd
import pytest

from prism_nb.verdict import (comparison_table, condition_sentence, family_comparisons, lead_sentence, paired_comparisons,
                              paired_difference, runner_up_sentence, seed_table, smallest_lead, smallest_p)

SEEDS = list(range(10, 20))
BASELINES = [f'B{k}' for k in range(1, 14)]


def frame(scores: dict, role=None, method=None) -> pd.DataFrame:
    "A `per_seed_scores`-like frame: {row: {seed: Avg.}}, keys (method, draw, role) from the row name unless given."
    return pd.DataFrame([dict(row=r, method=(method or {}).get(r, r.split(' ')[0].lower()), draw=0,
                              role=(role or {}).get(r, 'recipe'), seed=s, worst=50.0, collapsed=False, **{'Avg.': v})
                         for r, per in scores.items() for s, v in per.items()])


def constant_lead(n_seeds: int, lead: float) -> pd.DataFrame:
    "PRISM `lead` above all 13 baselines at every one of `n_seeds` seeds (the baselines equal each other)."
    base = dict(zip(SEEDS[:n_seeds], np.random.default_rng(0).uniform(70, 90, n_seeds)))
    return frame({'PRISM': {s: v + lead for s, v in base.items()}} | {b: dict(base) for b in BASELINES})


def test_a_constant_tiny_lead_is_not_assessed():
    ps = constant_lead(10, 1e-9)
    cmp = paired_comparisons(ps, 'PRISM', ['Avg.'])
    assert not cmp.assessed.any() and cmp.why.str.contains('no spread').all()
    assert cmp[['ci_low', 'ci_high', 'p', 'p_holm']].isna().all().all()  # no interval, no p
    s = lead_sentence(ps, cmp, 'At x')
    assert 'not assessed' in s and not re.search(r'better|leads \d|p = ', s), s
    assert comparison_table(cmp).verdict.str.startswith('not assessed').all()


def test_one_seed_states_no_smallest_p():
    ps = constant_lead(1, 2.0)
    s = lead_sentence(ps, paired_comparisons(ps, 'PRISM', ['Avg.']), 'At x')
    assert '13.00' not in s and 'not assessed' in s and '1 paired seed' in s, s


@pytest.mark.parametrize('bad', [0, -1, 2.5, float('nan'), True, '3'])
def test_smallest_p_takes_whole_numbers_of_at_least_one(bad):
    with pytest.raises(ValueError):
        smallest_p(bad)
    with pytest.raises(ValueError):
        smallest_p(10, bad)


def test_smallest_p_is_a_probability():
    assert smallest_p(1, 13) == 1.0 and smallest_p(10, 13) == pytest.approx(13 * 2 / 2**10) and smallest_p(10) == 2 / 2**10


def test_a_non_finite_score_is_refused_naming_row_and_seed():
    ps = constant_lead(10, 2.0)
    ps.loc[(ps.row == 'B3') & (ps.seed == 13), 'Avg.'] = np.nan
    with pytest.raises(ValueError, match=r'B3.*not finite.*\[13\]'):
        paired_comparisons(ps, 'PRISM', ['Avg.'])
    with pytest.raises(ValueError, match=r'B3.*\[13\]'):
        seed_table(ps, ['Avg.'])  # no mean over 9 seeds called 10


def test_a_repeated_seed_is_refused_naming_row_and_seed():
    ps = constant_lead(10, 2.0)
    ps = pd.concat([ps, ps[(ps.row == 'B2') & (ps.seed == 15)]])
    with pytest.raises(ValueError, match=r'B2.*\[15\]'):
        paired_comparisons(ps, 'PRISM', ['Avg.'])


def test_unequal_seed_sets_are_refused_unless_the_seeds_are_stated():
    a = pd.Series(np.arange(10.0), index=SEEDS)
    b = pd.Series(np.arange(10.0) - np.linspace(1, 2, 10), index=SEEDS).drop([12, 17])
    with pytest.raises(ValueError, match=r'\[12, 17\]'):
        paired_difference(a, b, who='ERM')
    d = paired_difference(a, b, who='ERM', seeds=[s for s in SEEDS if s not in (12, 17)])
    assert d['n'] == 8 and d['assessed']


def test_rows_pair_on_the_seeds_both_have_and_say_how_many():
    rng = np.random.default_rng(1)
    ps = frame({'PRISM': {s: 80 + rng.normal() for s in range(10, 30)}, 'ERM': {s: 78 + rng.normal() for s in range(10, 30)},
                'DANN': {s: 75 + rng.normal() for s in range(10, 20)}})
    cmp = paired_comparisons(ps, 'PRISM', ['Avg.']).set_index('row')
    assert (cmp.loc['ERM', 'n'], cmp.loc['DANN', 'n']) == (20, 10)
    assert '20' in lead_sentence(ps, cmp.reset_index(), 'x') and '10' in lead_sentence(ps, cmp.reset_index(), 'x')


def test_share_higher_is_the_paired_share_of_seeds():
    a = pd.Series(np.linspace(80, 90, 10), index=SEEDS)
    b = a - np.r_[np.linspace(0.5, 3, 9), -1.0]  # a higher on 9 of 10 seeds
    d = paired_difference(a, b)
    assert (d['higher'], d['n'], d['share_higher']) == (9, 10, 0.9) and 'p_improve' not in d
    cmp = paired_comparisons(frame({'PRISM': a.to_dict(), 'ERM': b.to_dict()}), 'PRISM', ['Avg.'])
    assert comparison_table(cmp).loc['ERM', 'PRISM higher'] == '9 of 10'


def test_an_interval_that_excludes_zero_is_never_level():
    "Like Mid -5.6 [-10.0, -2.5] with Holm's p above 5%: PRISM trails; never 'level', never 'no detectable difference'."
    rng = np.random.default_rng(3)
    ps = frame({'PRISM': {s: 80.0 for s in SEEDS}} | {b: {s: 83 + rng.normal() for s in SEEDS[:5]} for b in BASELINES})
    cmp = paired_comparisons(ps, 'PRISM', ['Avg.'])  # 5 seeds paired: Wilcoxon's p is at least 0.0625
    assert (cmp.ci_high < 0).all() and (cmp.p_holm > 0.05).all()
    assert (comparison_table(cmp).verdict == "PRISM trails (not after Holm's correction)").all()
    s = condition_sentence(cmp.assign(column='Mid'), 'B1', ['Mid'])
    assert 'trails on Mid' in s and 'level' not in s and 'no detectable' not in s, s


def test_a_recipe_displayed_as_a_runner_up_stays_a_recipe():
    rng = np.random.default_rng(2)
    rows = ['PRISM', 'ERM', 'CORAL', 'ERM (runner-up, draw 9)']
    ps = frame({r: {s: 80 - 3 * k + rng.normal(0, 1) for s in SEEDS} for k, r in enumerate(rows)},
               method={'ERM (runner-up, draw 9)': 'vrex'})  # VREx's recipe, displayed with a misleading name
    both = family_comparisons(ps, 'PRISM', ['Avg.']).set_index('row')
    alone = paired_comparisons(ps, 'PRISM', ['Avg.']).set_index('row')
    assert both.loc['ERM (runner-up, draw 9)', 'p_holm'] == alone.loc['ERM (runner-up, draw 9)', 'p_holm']
    assert runner_up_sentence(ps, both.reset_index()) == 'No runner-up has fresh-seed runs yet.'


def test_a_row_displayed_like_prisms_of_another_method_is_not_prisms():
    ps = frame({'PRISM': {s: 85.0 + s % 3 for s in SEEDS}, 'ERM': {s: 83.0 + s % 2 for s in SEEDS},
                'PRISM (mine)': {s: 90.0 + s % 4 for s in SEEDS}}, method={'PRISM (mine)': 'mine'})
    least = smallest_lead(ps)
    assert least['of'] == 'PRISM' and least['over'] == 'PRISM (mine)'  # 'PRISM (mine)' is another method's row


def test_keys_come_from_the_configs(tmp_path):
    from prism_nb.verdict import default_runs, per_seed_scores
    ps = per_seed_scores(default_runs('harc_ps', seeds=range(2), methods=['erm', 'prism']), 'harc_ps')
    assert {'method', 'draw', 'role', 'selected_epoch', 'val_acc'} <= set(ps.columns)
    assert set(ps.method) == {'erm', 'prism'} and set(ps.role) == {'defaults'}


def mend_toy(seeds, gain=6.0):
    "A `mend_frame`-like frame of both protocols: the mend `gain` points up on First/Last/Mid (seed noise added)."
    from prism_nb.prism import PRISM_VARIANT_NAMES
    conds = [('Random', 90.0), ('Regular', 90.0), ('Desync', 80.0), ('First', 83.0), ('Last', 83.0), ('Mid', 83.0)]
    return pd.DataFrame([dict(protocol=p, row=r, seed=s, condition=c, worst=40.0 + s,
                              acc=a + s % 5 + (gain + 0.3 * (s % 3) if r != 'PRISM' and c in ('First', 'Last', 'Mid') else 0))
                         for p in ('harc', 'harc_ps') for r in ('PRISM', PRISM_VARIANT_NAMES['bunch']) for s in seeds
                         for c, a in conds])


def bursts_toy(seeds=range(10, 20)):
    from prism_nb.mend import BURST_DESIGN, burst_verdict
    from prism_nb.prism import PRISM_VARIANT_NAMES
    return burst_verdict(pd.DataFrame([dict(row=r, seed=s, condition=c, worst=40, acc=60 + s % 3 + (s % 2 if r == 'PRISM' else 0))
                                       for r in (PRISM_VARIANT_NAMES['bunch'], 'PRISM') for s in seeds
                                       for c in BURST_DESIGN['conditions']]))


@pytest.mark.parametrize('seeds', [[0], list(range(9)), [s for s in range(20) if s != 7]])
def test_the_mend_is_not_recommended_from_part_of_its_seeds(seeds):
    from prism_nb.mend import mend_recommended, mend_sentence, mend_verdict
    v = mend_verdict(mend_toy(seeds))
    rec = mend_recommended(v, bursts_toy())
    assert rec is not True and not rec and str(rec).startswith('not assessed'), rec
    assert 'not assessed' in mend_sentence(v, 0.8, bursts=bursts_toy())


@pytest.mark.parametrize('bursts', [None, pd.DataFrame(), 'partial'])
def test_the_mend_is_not_recommended_without_its_burst_check(bursts):
    from prism_nb.mend import mend_recommended, mend_sentence, mend_verdict
    bursts = bursts_toy(range(10, 15)) if isinstance(bursts, str) else bursts
    v = mend_verdict(mend_toy(range(20)))
    rec = mend_recommended(v, bursts)
    assert rec is not True and str(rec).startswith('not assessed'), rec
    assert 'not assessed' in mend_sentence(v, 0.8, bursts=bursts)
    assert mend_recommended(v, bursts_toy()) is True  # the full seed set and the burst check: the rule decides


def test_iqm_interval_is_rliables(monkeypatch):
    "`iqm_interval` draws rliable's resamples: rliable's own `get_interval_estimates`, numpy seeded alike, agrees."
    try:
        from rliable import library as rly, metrics
        import arch.bootstrap as arch_bs
    except Exception as e:  # rliable 1.2 needs arch < 8, which does not import under pandas 3
        pytest.skip(f"rliable's bootstrap does not import here: {e!r}")
    from prism_nb.verdict import iqm_interval

    class Arch8(rly.StratifiedBootstrap):
        "rliable's StratifiedBootstrap where arch 8 took `seed` for `random_state` (rliable draws from np.random anyway)."
        def __init__(self, *args, random_state=None, task_bootstrap=False, **kwargs):
            arch_bs.IIDBootstrap.__init__(self, *args, **kwargs)
            self._args_shape = args[0].shape
            self._num_tasks = self._args_shape[1]
            self._parameters = [self._num_tasks, task_bootstrap]
            self._task_bootstrap = task_bootstrap
            self._strata_indices = self._get_strata_indices()

    import inspect
    if 'random_state' not in inspect.signature(arch_bs.IIDBootstrap.__init__).parameters:
        monkeypatch.setattr(rly, 'StratifiedBootstrap', Arch8)
    x = np.r_[np.linspace(85, 88, 12), 76.7, 79.0]
    state = np.random.get_state()
    try:
        np.random.seed(7)
        point, ci = rly.get_interval_estimates({'x': x.reshape(-1, 1)}, lambda s: np.array([metrics.aggregate_iqm(s)]),
                                               reps=500)
    finally:
        np.random.set_state(state)
    assert iqm_interval(x, reps=500, seed=7) == pytest.approx((point['x'][0], *ci['x'][:, 0]), abs=1e-12)
