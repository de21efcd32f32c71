"""One rule for registered names (issue 43): a name starts with a letter or a digit and holds ASCII letters, digits and `_ - .` (the data
archives: such names joined by '/'); a name that looks like a registered one (case, '-' versus '_',
Unicode look-alikes) is refused; and only the package's own modules, as they are imported, make
built-ins: a `module=` argument or a class's `__module__` naming the package neither replaces a
built-in nor adds one."""
import re

import pytest

import prism_nb  # noqa: F401  (registers every built-in)
from prism_nb.algorithms import ALGORITHMS, ERM
from prism_nb.backbones import BACKBONES
from prism_nb.clinical import DATA_ARCHIVES, DataArchive
from prism_nb.config import TASKS
from prism_nb.sampling import CONDITIONS

REGISTRIES = (ALGORITHMS, BACKBONES, DATA_ARCHIVES, TASKS, CONDITIONS)


def _builtin_set(reg) -> set:
    "The set behind a registry's built-in names (a plain attribute before issue 43)."
    return getattr(reg, '_builtin', None) if hasattr(reg, '_builtin') else reg.builtin


@pytest.fixture(autouse=True)
def restore_registries():
    "Leave every registry as the test found it, whatever an attack managed to change."
    saved = [(dict(r._entries), dict(r._display), set(_builtin_set(r))) for r in REGISTRIES]
    yield
    for r, (entries, display, builtin) in zip(REGISTRIES, saved):
        r._entries.clear()
        r._entries.update(entries)
        r._display.clear()
        r._display.update(display)
        _builtin_set(r).clear()
        _builtin_set(r).update(builtin)


class Mine(ERM):
    "A user's method."


@pytest.mark.parametrize('name', ['', None, '../x', 'a/b', 'erm\u202e', '\u202eMRE', 'cnn ', 'x\n',
                                  ' mine', 'my model', 'm\u00e9thode', '..'])
def test_a_malformed_name_is_refused(name):
    with pytest.raises(ValueError, match='method') as e:
        ALGORITHMS.register(name, Mine, module='my_plugin')
    assert repr(name) in str(e.value)
    assert name not in ALGORITHMS._entries


def test_a_cyrillic_name_cannot_pass_for_a_built_in():
    with pytest.raises(ValueError, match="U\\+0415 CYRILLIC CAPITAL LETTER IE.*looks like the method 'erm'"):
        ALGORITHMS.register('\u0415RM', Mine, module='my_plugin')
    with pytest.raises(ValueError, match="U\\+212A KELVIN SIGN"):  # lower() would make it 'knn'
        ALGORITHMS.register('\u212aNN', Mine, module='my_plugin')


@pytest.mark.parametrize('reg,name,like', [
    (TASKS, 'HARC', 'harc'), (TASKS, 'har-c', 'harc'), (BACKBONES, 'cnn-m', 'cnn_m'),
    (CONDITIONS, 'random', 'Random'), (CONDITIONS, 'fixed_feat.-p', 'Fixed-Feat.-P'),
    (ALGORITHMS, 'ib-erm', 'ib_erm')])
def test_a_look_alike_of_a_registered_name_is_refused(reg, name, like):
    with pytest.raises(ValueError, match=f"{reg.kind} {name!r} looks like the registered {reg.kind} {like!r}"):
        reg.register(name, Mine, module='my_plugin')


@pytest.mark.parametrize('reg,name,obj,module', [
    (DATA_ARCHIVES, 'p12/set-a.tar.gz', DataArchive('0' * 64, 'x'), 'prism_nb.clinical'),
    (ALGORITHMS, 'erm', Mine, 'prism_nb.algorithms'),
    (ALGORITHMS, 'ERM', Mine, 'prism_nb'),
    (BACKBONES, 'cnn', lambda n_features, seq_len: None, 'prism_nb.backbones'),
    (CONDITIONS, 'Random', lambda n, L, D, steps, g: None, 'prism_nb.sampling'),
    (TASKS, 'harc', TASKS['p12'], 'prism_nb.config')])
def test_a_module_argument_cannot_replace_a_built_in(reg, name, obj, module):
    before = reg[name]
    for replace in (False, True):
        with pytest.raises(ValueError, match="is built in and cannot be replaced"):
            reg.register(name, obj, replace=replace, module=module)
    assert reg[name] is before


def test_a_module_argument_cannot_add_a_built_in():
    ALGORITHMS.register('fake_builtin', Mine, module='prism_nb.algorithms')
    DATA_ARCHIVES.register('mine/file.zip', DataArchive('0' * 64, 'x'), module='prism_nb.clinical')
    assert 'fake_builtin' not in ALGORITHMS.builtin and 'mine/file.zip' not in DATA_ARCHIVES.builtin
    ALGORITHMS.register('fake_builtin', ERM, replace=True)  # a user entry: its owner may replace it


def test_a_class_saying_it_is_the_package_cannot_replace_a_built_in():
    Fake = type('ERM', (ERM,), {'__module__': 'prism_nb.algorithms'})
    with pytest.raises(ValueError, match="'erm' is built in"):
        ALGORITHMS.register('erm', Fake)
    ALGORITHMS.register('fake2', Fake)
    assert 'fake2' not in ALGORITHMS.builtin


def test_built_in_names_are_read_only():
    for reg in REGISTRIES:
        assert not hasattr(reg.builtin, 'discard') and not hasattr(reg.builtin, 'add'), reg.kind


def test_the_package_s_own_names_are_built_in():
    import subprocess, sys
    code = ('import prism_nb; from prism_nb.algorithms import ALGORITHMS; from prism_nb.sampling import CONDITIONS; '
            'from prism_nb.config import TASKS; from prism_nb.backbones import BACKBONES; '
            'from prism_nb.clinical import DATA_ARCHIVES; '
            'print(all(set(r.builtin) == set(r) for r in (ALGORITHMS, CONDITIONS, TASKS, BACKBONES, DATA_ARCHIVES)))')
    fresh = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True)  # no test's own entries
    assert fresh.stdout.strip().splitlines()[-1] == 'True', fresh.stderr[-2000:]
    for reg in REGISTRIES:
        assert set(reg.builtin) <= set(reg), reg.kind
    assert {'Fixed-Feat.-P', 'Rand-Feat.'} <= set(CONDITIONS.builtin)
    assert {'p12/set-a.tar.gz', 'pam/raindrop_PAM_labels_and_splits.npz'} <= set(DATA_ARCHIVES.builtin)
    assert {'erm', 'prism'} <= set(ALGORITHMS.builtin) and 'harc' in TASKS.builtin


# ---- issue 61: Unicode's confusables, names too long to be filed, and names a `temporary` block holds

@pytest.mark.parametrize('display,like', [
    ('\u13acRM', 'ERM'),  # Cherokee E
    ('\ua4f0\ua4e3\ua4df', 'ERM'),  # Lisu E, R, M
    ('E\u0280M', 'ERM'),  # a small capital R
    ('PRlSM', 'PRISM'),  # a small L for the I
    ('PRI\u0405M', 'PRISM'),  # Cyrillic capital DZE
    ('PR\u04c0SM', 'PRISM'),  # Cyrillic palochka
])
def test_a_display_name_that_reads_as_a_built_in_is_refused(display, like):
    with pytest.raises(ValueError, match=re.escape(f"would be shown as {display!r}, which looks like {like!r}")):
        ALGORITHMS.register('mine', Mine, display=display, module='my_plugin')
    assert 'mine' not in ALGORITHMS


def test_look_alikes_come_from_unicode_s_confusables_not_a_table_of_ours():
    from prism_nb import names
    assert not hasattr(names, '_LOOKALIKE')
    assert len(names._prototypes()) > 5000  # confusables.txt maps thousands of characters; a table of ours had 46
    ALGORITHMS.register('mine', Mine, display='Mine (ERN)', module='my_plugin')  # what only looks like itself


def test_a_name_too_long_to_be_filed_is_refused_when_registered():
    "A name is part of its records' file names: one that cannot be filed is refused now, not at the first run."
    for reg, name in ((ALGORITHMS, 'm' * 64), (ALGORITHMS, 'm' * 36), (BACKBONES, 'b' * 40)):
        with pytest.raises(ValueError, match=f"{reg.kind} name {name!r} is too long to be filed: task '"):
            reg.register(name, Mine, module='my_plugin')
        assert name not in reg


def test_a_name_that_registers_can_be_filed_by_every_task(tmp_path):
    "The longest method name that registers makes a record path in every task, at the largest seed."
    from prism_nb.config import make_config, record_path
    name = 'm' * 35
    ALGORITHMS.register(name, Mine, module='my_plugin')
    for task in (t for t in TASKS if 'draw' not in TASKS[t].defaults):  # a search's configs: search_configs'
        cfg = make_config(method=name, seed=2**31 - 1, **({} if task == 'harc' else {'dataset': task}))
        assert record_path(cfg, tmp_path).name.startswith(name), task


def test_a_name_a_temporary_block_holds_is_not_registered_for_good():
    "The block's end would take it out again, silently: refused at once."
    with ALGORITHMS.temporary('brief', Mine):
        with pytest.raises(ValueError, match=re.escape("method 'brief' is registered for a `temporary()` block")):
            ALGORITHMS.register('brief', ERM, replace=True, module='my_plugin')
        with ALGORITHMS.temporary('brief', ERM, replace=True):  # a block inside it is restored in turn
            assert ALGORITHMS['brief'] is ERM
        assert ALGORITHMS['brief'] is Mine
    assert 'brief' not in ALGORITHMS
    ALGORITHMS.register('brief', Mine, module='my_plugin')  # after the block, for good
    assert ALGORITHMS['brief'] is Mine
