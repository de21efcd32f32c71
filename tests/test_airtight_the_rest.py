"""Issue 61, part B: the hang in the registration probe, journals and locks of a render, ledger forgeries that agree
with themselves, evaluation records outside the contract, and faults found late. Each case is refused before any
work, naming the condition, file, folder or parameter; nothing hangs and no file moves from outside a render."""
import threading

import pytest
import torch

from prism_nb.core import ConfigError
from prism_nb.sampling import CONDITIONS, register_condition, register_signal_condition
import prism_nb.sampling as sampling


def raised(fn, kind, *parts) -> str:
    "The message of the error `fn` raises, checked to be a `kind` holding every part."
    with pytest.raises(Exception) as e:
        fn()
    assert isinstance(e.value, kind), (type(e.value).__name__, str(e.value))
    for p in parts:
        assert p in str(e.value), (p, str(e.value))
    return str(e.value)


# --- 1. registering a condition -----------------------------------------------------------------

@pytest.mark.parametrize('sees', [True, False])
def test_a_condition_that_never_returns_is_refused_at_registration_naming_it(monkeypatch, sees):
    monkeypatch.setattr(sampling, 'PROBE_LIMIT_S', 0.2, raising=False)
    release = threading.Event()

    def hangs(*args):
        release.wait()  # never returns until the test lets it go
        raise RuntimeError('released')

    name = f'Hangs{sees}'
    register = register_signal_condition if sees else register_condition
    try:
        raised(lambda: register(name)(hangs), ConfigError, repr(name), 'did not return')
    finally:
        release.set()
    assert name not in CONDITIONS


def test_the_probe_under_its_limit_keeps_the_global_generator():
    state = torch.get_rng_state()

    def draws_from_g(v, m, steps, g):
        torch.rand(3)  # a draw from torch's global generator the probe puts back, wherever it runs
        out = torch.zeros_like(m)
        out[:, :steps] = 1.0
        return out

    register_signal_condition('QuickOne')(draws_from_g)  # the same masks twice: accepted
    assert torch.equal(torch.get_rng_state(), state)


@pytest.mark.parametrize('fn', [len, print, torch.ones_like, lambda v, m: m])
def test_a_function_that_cannot_take_the_conditions_arguments_is_refused_at_registration(fn):
    raised(lambda: register_signal_condition('Builtin')(fn), ConfigError, "'Builtin'", '(v, m, steps, g)')
    raised(lambda: register_condition('BuiltinPlain')(fn), ConfigError, "'BuiltinPlain'", '(n, L, D, steps, g)')
    assert 'Builtin' not in CONDITIONS and 'BuiltinPlain' not in CONDITIONS


# --- 2. a render's journals, locks and killed moves ----------------------------------------------

import json
from pathlib import Path

import pandas as pd
from filelock import FileLock

from prism_nb.artefacts import render_folders
from prism_nb import report
from prism_nb.report import check_render_finished, finish_publish, publish, read_table


def render_set(tag: str) -> tuple:
    "A table and a figure, both showing `tag`."
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(1, 1))
    ax.set_title(tag)
    return {'harc': (pd.DataFrame({'Avg.': [f'{tag} ± 0.1']}, index=['ERM']), {})}, {'f': fig}


def planted_journal(out: Path, uid: str, figures_dir) -> Path:
    "A `.tables.commit-<uid>` folder beside `out/tables` whose journal names `figures_dir`."
    commit = out / f'.tables.commit-{uid}'
    commit.mkdir(parents=True)
    (commit / '.journal.json').write_text(json.dumps({'figures_dir': str(figures_dir)}))
    return commit / '.journal.json'


def test_a_journal_naming_a_folder_outside_the_render_moves_nothing_and_is_named(tmp_path):
    victim = tmp_path / 'victim'
    victim.mkdir()
    (victim / 'keep.txt').write_text('mine')
    planted = tmp_path / '.victim.staging-abcd1234'
    planted.mkdir()
    (planted / 'keep.txt').write_text('planted')
    out = tmp_path / 'out'
    journal = planted_journal(out, 'abcd1234', victim)
    raised(lambda: render_folders(out / 'tables', out / 'figures'), ConfigError, str(journal), str(victim))
    assert (victim / 'keep.txt').read_text() == 'mine' and (planted / 'keep.txt').read_text() == 'planted'


@pytest.mark.parametrize('text', ['{"figures_dir": 7}', '[1, 2]', '{not json', '{}'])
def test_a_damaged_journal_is_refused_naming_it(tmp_path, text):
    out = tmp_path / 'out'
    journal = planted_journal(out, 'abcd1234', out / 'figures')
    journal.write_text(text)
    raised(lambda: finish_publish(out / 'tables', out / 'figures'), ConfigError, str(journal))


def test_a_staging_folder_that_is_a_link_out_of_the_render_moves_nothing(tmp_path):
    elsewhere = tmp_path / 'elsewhere'
    elsewhere.mkdir()
    (elsewhere / 'secret.txt').write_text('not the render')
    out = tmp_path / 'out'
    planted_journal(out, 'abcd1234', out / 'figures')
    (out / '.figures.staging-abcd1234').symlink_to(elsewhere)
    raised(lambda: finish_publish(out / 'tables', out / 'figures'), ConfigError, '.figures.staging-abcd1234', 'link')
    assert (elsewhere / 'secret.txt').read_text() == 'not the render'


def test_a_render_into_a_figures_folder_another_render_holds_is_refused(tmp_path):
    t, f = render_set('1.00')
    figures = tmp_path / 'shared' / 'figures'
    figures.parent.mkdir()
    with FileLock(str(figures.parent / '.render.lock')):  # a render with its tables elsewhere is writing here
        raised(lambda: publish(t, f, tmp_path / 'mine' / 'tables', figures), RuntimeError, 'another render holds')
    assert not figures.exists() and not (tmp_path / 'mine' / 'tables').exists()


def test_a_render_killed_between_figures_and_tables_is_reported_by_the_next_reader(tmp_path, monkeypatch):
    tables, figures = tmp_path / 'out' / 'tables', tmp_path / 'out' / 'figures'
    (old_t, old_f), (new_t, new_f) = render_set('11.00'), render_set('22.00')
    publish(old_t, old_f, tables, figures)
    assert read_table('harc', tables, figures).loc['ERM', 'Avg.'] == '11.00 ± 0.1'
    real = report._move_in

    def killed(src, live):
        if Path(live) == tables:
            raise KeyboardInterrupt('killed between moving in figures and tables')
        return real(src, live)

    monkeypatch.setattr(report, '_move_in', killed)
    with pytest.raises(KeyboardInterrupt):
        publish(new_t, new_f, tables, figures)
    monkeypatch.setattr(report, '_move_in', real)
    msg = raised(lambda: read_table('harc', tables, figures), ConfigError, str(tables), str(figures), 'render_folders(')
    assert '.tables.commit-' in msg
    raised(lambda: check_render_finished(tables, figures), ConfigError, 'killed')
    render_folders(tables, figures)  # what the message says to run
    check_render_finished(tables, figures)
    assert read_table('harc', tables, figures).loc['ERM', 'Avg.'] == '22.00 ± 0.1'
