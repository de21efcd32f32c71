"""One rule for relative folders (issues 44, 54): PRISM_DATA, PRISM_CACHE, results_dir and checkpoints_dir given
relative are relative to the repository root, whichever folder a process starts in (JupyterLab starts kernels in
nbs/, papermill and the shell at the root), and an error about missing data names the folder looked in, where it
came from and how to change it."""
import os, subprocess, sys
from pathlib import Path

import pytest

from prism_nb.core import ConfigError, cache_dir, data_dir, folder_path, repo_root, results_root

ROOT = Path(__file__).resolve().parent.parent
STARTS = (ROOT, ROOT / 'nbs')  # where papermill and where a JupyterLab kernel start


def test_the_repository_root_is_this_checkout():
    assert repo_root().resolve() == ROOT


@pytest.mark.parametrize('start', STARTS, ids=['root', 'nbs'])
def test_a_relative_prism_data_is_relative_to_the_repository_root(start, monkeypatch):
    monkeypatch.setenv('PRISM_DATA', '../shared/data')
    monkeypatch.chdir(start)
    assert data_dir().resolve() == (ROOT.parent / 'shared' / 'data').resolve()


@pytest.mark.parametrize('start', STARTS, ids=['root', 'nbs'])
def test_a_relative_prism_cache_is_relative_to_the_repository_root(start, tmp_path, monkeypatch):
    monkeypatch.setenv('PRISM_CACHE', os.path.relpath(tmp_path / 'cache', ROOT))
    monkeypatch.chdir(start)
    assert cache_dir().resolve() == (tmp_path / 'cache').resolve()
    assert (tmp_path / 'cache').is_dir()


@pytest.mark.parametrize('start', STARTS, ids=['root', 'nbs'])
@pytest.mark.parametrize('key', ['results_dir', 'checkpoints_dir'])
def test_a_relative_results_or_checkpoints_folder_is_relative_to_the_repository_root(start, key, tmp_path,
                                                                                      monkeypatch):
    rel = os.path.relpath(tmp_path / 'runs' / 'mine', ROOT)  # '../..': wrong by a level from nbs/ if cwd-relative
    monkeypatch.chdir(start)
    (tmp_path / 'runs' / 'mine').mkdir(parents=True)  # a reader's folder must exist
    assert folder_path(key, rel).resolve() == (tmp_path / 'runs' / 'mine').resolve()
    assert results_root(rel).resolve() == (tmp_path / 'runs' / 'mine').resolve()
    assert folder_path(key, 'runs/mine') == ROOT / 'runs' / 'mine'


def test_a_kernel_in_nbs_reads_the_data_a_run_at_the_root_reads(tmp_path):
    code = ('from prism_nb.core import data_dir, cache_dir, folder_path, results_root; '
            "print(data_dir().resolve(), cache_dir().resolve(), results_root('results'), "
            "folder_path('checkpoints_dir', 'ck'))")
    env = {**os.environ, 'PRISM_DATA': '../shared/data',
           'PRISM_CACHE': os.path.relpath(tmp_path / 'c', ROOT), 'PYTHONPATH': str(ROOT)}
    seen = {subprocess.run([sys.executable, '-c', code], cwd=start, env=env, capture_output=True,
                           text=True, check=True).stdout for start in STARTS}
    assert len(seen) == 1, seen


def test_an_absolute_or_home_relative_prism_data_is_kept(monkeypatch):
    monkeypatch.setenv('PRISM_DATA', '/some/where')
    assert data_dir() == Path('/some/where')
    monkeypatch.setenv('PRISM_DATA', '~/data')
    assert data_dir() == Path.home() / 'data'


@pytest.mark.parametrize('raw', ['../no_such_data_folder', '/no/such/data/folder', None])
def test_the_missing_data_note_names_the_folder_its_origin_and_the_fix(raw, monkeypatch):
    from prism_nb.core import data_root_note
    if raw is None:
        monkeypatch.delenv('PRISM_DATA', raising=False)
    else:
        monkeypatch.setenv('PRISM_DATA', raw)
    monkeypatch.chdir(ROOT / 'nbs')
    note = data_root_note()
    assert f'the data root is {data_dir()}' in note
    assert (f'PRISM_DATA={raw!r}' if raw else 'the default <repo>/data (PRISM_DATA is unset)') in note
    if raw and not raw.startswith('/'):
        assert f'relative to the repository root {repo_root()}' in note
    assert 'export PRISM_DATA=/abs/path/to/shared/data, or a path relative to the repository root' in note


def test_an_unusable_cache_folder_names_the_folder_and_where_it_came_from(tmp_path, monkeypatch):
    (tmp_path / 'a_file').write_text('')
    rel = os.path.relpath(tmp_path / 'a_file', ROOT)
    monkeypatch.setenv('PRISM_CACHE', rel)
    monkeypatch.chdir(ROOT / 'nbs')
    with pytest.raises(ConfigError) as e:
        cache_dir()
    assert f'PRISM_CACHE={rel!r} cannot be the cache folder' in str(e.value)
    assert f'it is {repo_root() / rel}' in str(e.value) and 'relative to the repository root' in str(e.value)


def test_readers_given_a_folder_that_does_not_exist_say_so(tmp_path):
    "A typo in a results folder is an error naming it, not an empty table that reads as 'no runs yet'."
    from prism_nb.core import ConfigError
    from prism_nb.tuning import tuned_frame
    from prism_nb.verdict import fresh_verdict
    from prism_nb.artefacts import harc_records
    from prism_nb.paths import overlay
    missing = tmp_path / 'typo'
    for read in (lambda: tuned_frame(results_dir=missing), lambda: fresh_verdict(missing),
                 lambda: harc_records({'ERM': dict(method='erm')}, results_dir=missing), lambda: overlay(missing)):
        with pytest.raises(ConfigError, match=f'{missing} does not exist'):
            read()


def test_a_folder_name_with_a_newline_is_refused():
    from prism_nb.core import ConfigError, folder_path
    with pytest.raises(ConfigError, match='holds a control character'):
        folder_path('results_dir', 'runs/a\nb')
