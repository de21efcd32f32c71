"""Damaged files: what the project writes is readable, its caches check their content and
heal, pickles from unverified files are refused, and the P12 parser rejects what it cannot read
(naming the file and line) and counts what it drops.

Fast: every test builds its data in a temporary folder; the ones that read the real data are skipped
when it is absent."""
import io, os, re, shutil, stat, tarfile, warnings
from pathlib import Path
from unittest import mock

import numpy as np
import pandas as pd
import pytest

from prism_nb.core import atomic_write, data_dir, sha256_file


@pytest.fixture
def cache(tmp_path):
    "A fresh PRISM_CACHE for one test."
    d = tmp_path / 'cache'
    with mock.patch.dict(os.environ, {'PRISM_CACHE': str(d)}):
        yield d


# 1. files the project writes are readable by others

@pytest.mark.parametrize('umask,mode', [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_atomic_write_mode_follows_umask(tmp_path, umask, mode):
    old = os.umask(umask)
    try: atomic_write(tmp_path / 'r.json', lambda tmp: Path(tmp).write_text('{}'))
    finally: os.umask(old)
    assert stat.S_IMODE((tmp_path / 'r.json').stat().st_mode) == mode


# 2. the HAR cache verifies its content

def _fake_hapt(folder, T=800, segments=((1, 50, 300), (4, 401, 600))):
    "A one-experiment HAPT layout (unknown files: verify=False)."
    raw = Path(folder) / 'Fake HAPT/RawData'; raw.mkdir(parents=True)
    acc = np.stack([np.arange(T), np.zeros(T), np.ones(T)], 1)
    np.savetxt(raw / 'acc_exp01_user03.txt', acc, fmt='%.10f'); np.savetxt(raw / 'gyro_exp01_user03.txt', acc * 0)
    (raw / 'labels.txt').write_text(''.join(f'1 3 {a} {f} {l}\n' for a, f, l in segments))
    return Path(folder)


def _same(a, b):
    for k in ('x', 'y', 'subject', 'experiment', 'start'): np.testing.assert_array_equal(getattr(a, k), getattr(b, k))
    assert (a.source, a.fingerprint) == (b.source, b.fingerprint)


def _replace_and_reload(cache, load):
    "Load once, swap the cache for other valid HARWindows files, and check every load heals."
    from prism_nb.data import HARWindows
    first = load()
    (npz,) = cache.glob('har_*.npz')
    for other in [HARWindows(first.x[:2], first.y[:2], first.subject[:2], first.source, first.fingerprint,
                             first.experiment[:2], first.start[:2], first.meta),  # a subset
                  HARWindows(first.x, first.y[::-1].copy(), first.subject, first.source, first.fingerprint,
                             first.experiment, first.start, first.meta)]:  # labels permuted
        with open(npz, 'wb') as f: other.save(f)  # a valid HARWindows file, with other contents
        with pytest.warns(UserWarning, match=re.escape(str(npz))):
            again = load()
        _same(again, first)
        _same(load(), first)  # and the healed cache is trusted again
    npz.write_bytes(npz.read_bytes()[:1000])  # truncated
    with pytest.warns(UserWarning, match=re.escape(str(npz))):
        _same(load(), first)


def test_har_cache_replaced_is_rebuilt_fake(tmp_path, cache):
    from prism_nb.data import load_har
    src = _fake_hapt(tmp_path / 'hapt')
    _replace_and_reload(cache, lambda: load_har('hapt', path=src, verify=False))


def test_har_cache_replaced_is_rebuilt_real(cache):
    "The real HAPT archive (about 1.5 s per build on two cores; the test builds four times)."
    from prism_nb.data import load_har
    if not (data_dir() / 'hapt/HAPT_Data_Set.zip').exists(): pytest.skip('HAPT archive not here')
    _replace_and_reload(cache, lambda: load_har('hapt'))


# 3. the clinical cache verifies its content

def _tiny_build(scale=1.):
    from prism_nb.clinical import _sparse
    v = np.full((2, 3, 2), np.nan, np.float32); v[0, 1, 0] = 1.5 * scale; v[1, 2, 1] = -2.
    meta = pd.DataFrame({'stay_id': [7, 8], 'region': ['South', 'West']})
    return _sparse(v), np.tile(np.arange(3, dtype=np.float32), (2, 1)), np.array([0, 1]), np.array([0, 1]), meta, {'n': 2}


def test_clinical_cache_heals(cache):
    from prism_nb.clinical import _cache_path, _cached
    calls = []
    def build(scale=1.): calls.append(scale); return _tiny_build(scale)
    load = lambda cfg=dict(k=1), b=build: _cached('tiny', cfg, b, ['f0', 'f1'], ['a', 'b'], 'toy', 'fp')
    first = load(); load()
    assert calls == [1.]  # the second load reads the cache
    path = _cache_path('tiny', dict(k=1))[0]
    path.write_bytes(path.read_bytes()[:200])  # truncated
    with pytest.warns(UserWarning, match=re.escape(str(path))):
        healed = load()
    assert calls == [1., 1.]
    for a, b in [(healed.x.v, first.x.v), (healed.x.m, first.x.m), (healed.x.t, first.x.t), (healed.x.y, first.x.y)]:
        assert (a == b).all()
    pd.testing.assert_frame_equal(healed.meta, first.meta); assert healed.info == first.info
    other = load(dict(k=2), lambda: build(3.))  # another valid cache file, other contents
    shutil.copy(_cache_path('tiny', dict(k=2))[0], path)
    with pytest.warns(UserWarning, match=re.escape(str(path))):
        replaced = load()
    assert (replaced.x.v == first.x.v).all() and not (other.x.v == first.x.v).all()
    assert calls == [1., 1., 3., 1.]


# 4. no pickles from unverified files

class _Marker:
    "Unpickling it creates a file: proof that code ran."
    def __init__(self, path): self.path = str(path)
    def __reduce__(self): return (io.open, (self.path, 'w'))


def test_pam_refuses_pickles(tmp_path):
    from prism_nb.pam import make_pam_fixture, read_raindrop_pam
    fx = make_pam_fixture(tmp_path / 'pam', per_class=1)
    plain = read_raindrop_pam(fx, labels_root=tmp_path)  # the fixture is plain numeric arrays
    assert plain.x.shape == (8, 600, 17)
    marker = tmp_path / 'pwned'
    evil = np.empty(1, dtype=object); evil[0] = _Marker(marker)
    for name in ('PTdict_list.npy', 'arr_outcomes.npy'):
        bad = tmp_path / f'bad_{name}'; shutil.copytree(fx, bad)
        np.save(bad / 'processed_data' / name, evil, allow_pickle=True)
        with pytest.raises(ValueError, match=re.escape(name)) as e:
            read_raindrop_pam(bad, labels_root=tmp_path)
        assert 'pickle' in str(e.value) and 'trusted_sha256' in str(e.value)
        with pytest.raises(ValueError, match='does not match'):  # a wrong checksum does not open it either
            read_raindrop_pam(bad, labels_root=tmp_path, trusted_sha256={name: '0' * 64})
        assert not marker.exists()


def test_pam_object_array_needs_its_checksum(tmp_path):
    from prism_nb.pam import make_pam_fixture, read_raindrop_pam
    fx = make_pam_fixture(tmp_path / 'pam', per_class=1)
    raw = np.load(fx / 'processed_data/PTdict_list.npy')
    as_dicts = np.empty(len(raw), dtype=object)
    for i in range(len(raw)): as_dicts[i] = dict(id=i, arr=raw[i])
    np.save(fx / 'processed_data/PTdict_list.npy', as_dicts, allow_pickle=True)
    with pytest.raises(ValueError, match='PTdict_list.npy'):
        read_raindrop_pam(fx, labels_root=tmp_path)
    ok = read_raindrop_pam(fx, labels_root=tmp_path,
                           trusted_sha256={'PTdict_list.npy': sha256_file(fx / 'processed_data/PTdict_list.npy')})
    assert (ok.x.v.numpy() == raw.astype(np.float32)).all()


# 5. the P12 parser: bad times, outcomes and what is dropped

_DESC = '00:00,RecordID,{r}\n00:00,Age,54\n00:00,Gender,0\n00:00,Height,-1\n00:00,ICUType,{icu}\n00:00,Weight,-1\n'


def _record(r, icu=4, series='00:07,GCS,15\n00:37,HR,73\n'):
    return 'Time,Parameter,Value\n' + _DESC.format(r=r, icu=icu) + series


def _p12_archive(path, name, records: dict, outcomes: str):
    "A set-x.tar.gz in PhysioNet's layout: name/<RecordID>.txt and Outcomes-x.txt."
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, 'w:gz') as tf:
        for member, text in [*((f'{name}/{r}.txt', t) for r, t in records.items()), (f'Outcomes-{name[-1]}.txt', outcomes)]:
            b = text.encode(); info = tarfile.TarInfo(member); info.size = len(b); tf.addfile(info, io.BytesIO(b))
    return path


_OUT_HEAD = 'RecordID,SAPS-I,SOFA,Length_of_stay,Survival,In-hospital_death\n'


def _outcomes(*rows): return _OUT_HEAD + ''.join(f'{r},10,2,5,-1,{d}\n' for r, d in rows)


@pytest.mark.parametrize('series,line,what', [
    ('00:07,GCS,15\n-01:30,HR,73\n', 9, 'time'),
    ('00:07,GCS,15\n00:-5,HR,73\n', 9, 'time'),
    ('00:07,GCS,15\n00:37,HR,73\n1:2:3,HR,70\n', 10, 'time'),
    ('00:07,GCS,15\n00:37,HR,seventy\n', 9, ''),
    ('00:07,GCS,15\n\n00:37,HR,73\n', 9, ''),
])
def test_p12_rejects_bad_lines(tmp_path, series, line, what):
    from prism_nb.clinical import _read_p12_set
    p = _p12_archive(tmp_path / 'set-a.tar.gz', 'set-a', {132539: _record(132539), 132540: _record(132540, series=series)},
                     _outcomes((132539, 0), (132540, 1)))
    with pytest.raises(ValueError) as e: _read_p12_set(p)
    msg = str(e.value)
    assert str(p) in msg and 'set-a/132540.txt' in msg and f'line {line}' in msg and what in msg, msg


def test_p12_rejects_bad_outcomes(tmp_path):
    from prism_nb.clinical import _read_p12_set
    recs = {132539: _record(132539), 132540: _record(132540)}
    p = _p12_archive(tmp_path / 'a/set-a.tar.gz', 'set-a', recs, _outcomes((132539, 0)))  # 132540 has no outcome row
    with pytest.raises(ValueError) as e: _read_p12_set(p)
    assert str(p) in str(e.value) and 'set-a/132540.txt' in str(e.value) and 'Outcomes-a.txt' in str(e.value)
    p = _p12_archive(tmp_path / 'b/set-a.tar.gz', 'set-a', recs, _outcomes((132539, 0), (132540, 2)))  # not 0/1
    with pytest.raises(ValueError) as e: _read_p12_set(p)
    assert str(p) in str(e.value) and 'Outcomes-a.txt' in str(e.value) and 'line 3' in str(e.value)


def test_p12_counts_what_it_drops(tmp_path):
    from prism_nb.clinical import _build_p12
    root = tmp_path / 'data'
    _p12_archive(root / 'p12/set-a.tar.gz', 'set-a',
                 {1: _record(1, 1, '00:07,GCS,15\n01:30,NIDiasABP,-1\n'), 2: _record(2, 2, '')},  # a negative value; no series
                 _outcomes((1, 1), (2, 0)))
    _p12_archive(root / 'p12/set-b.tar.gz', 'set-b', {3: _record(3, 3, '00:07,GCS,15\n10:45,,1.9\n00:40,Foo,1\n')},
                 _outcomes((3, 0)))  # an empty parameter name; an unknown parameter
    _p12_archive(root / 'p12/set-c.tar.gz', 'set-c', {4: _record(4, 4)}, _outcomes((4, 1)))
    obs, t, y, d, meta, info = _build_p12(root)
    assert meta.record_id.tolist() == [1, 3, 4] and y.tolist() == [1, 0, 1]
    assert info['dropped'] == {'no_series': 1, 'empty_param_lines': 1, 'negative_values': 1, 'unknown_param_lines': 1}


def test_eicu_demo_counts_what_it_drops(cache):
    from prism_nb.clinical import load_eicu_demo
    if not (data_dir() / 'eicu_demo/eicu_demo_yaib_mortality24.zip').exists(): pytest.skip('eICU demo not here')
    assert load_eicu_demo().info['dropped'] == {'unknown_region': 119}
    assert load_eicu_demo(unknown_region='keep').info['dropped'] == {}
    assert load_eicu_demo(label='hospital').info['dropped'] == {'no_discharge_status': 16, 'unknown_region': 118}
