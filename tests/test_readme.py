"""The README's numbers are computed from the committed records: rerunning nbs/index.ipynb gives the outputs that
are committed in it (and hence in README.md); the same holds for the results page, nbs/results.ipynb. The README is
a front door: short, with a license and a citation file beside it."""
import json, re, subprocess, sys
import pytest
sys.path.insert(0, str(__import__('pathlib').Path(__file__).resolve().parent.parent / 'tools'))
from render_readme import echo_false_outputs, from_root

@pytest.mark.parametrize('name', ['index', 'results'])
def test_numbers_are_fresh(root, tmp_path, name):
    out = tmp_path / f'{name}.ipynb'
    subprocess.run([sys.executable, '-m', 'papermill', str(root / 'nbs' / f'{name}.ipynb'), str(out), '--cwd', str(root / 'nbs')],
                   check=True, capture_output=True)
    fresh = [echo_false_outputs(c) for c in json.loads(out.read_text())['cells'] if c['cell_type'] == 'code']
    committed = [echo_false_outputs(c) for c in json.loads((root / 'nbs' / f'{name}.ipynb').read_text())['cells'] if c['cell_type'] == 'code']
    assert any(committed), f'{name}.ipynb is committed without its outputs: run `python tools/refresh_index.py {name}`'
    for f, c in zip(fresh, committed):
        assert f == c, f'stale numbers in nbs/{name}.ipynb: rerun `python tools/refresh_index.py {name}`\n--- committed\n{c[:1500]}\n--- from the records\n{f[:1500]}'

def prose_words(md: str) -> int:
    "Words outside code blocks and table rows (a table's 'mean ± se' cell is three words of numbers, not prose)."
    md = re.sub(r'```.*?```', '', md, flags=re.S)
    return len(' '.join(l for l in md.split('\n') if not l.lstrip().startswith('|')).split())

def test_prose_words_counts_prose_only():
    assert prose_words('one two\n| a | 1 ± 2 |\n```sh\nx y z\n```\nthree') == 3

def test_readme_is_a_front_door(root):
    words = prose_words((root / 'README.md').read_text())
    # 1,300 until issue 62 defined every term where the README first uses it (draws, Avg., severities, PRISM higher on
    # k of n); 1,500 since issue 60's computed bullets say each comparison's seeds, interval and Holm beside the word,
    # and the tail; the per-condition, runner-up, per-trial and mend detail lives on the results page
    assert words <= 1500, f'README.md has {words} words of prose: keep it a front door (at most 1,500) and move the rest to nbs/guide.ipynb or nbs/results.ipynb'
    for f in ['LICENSE', 'CITATION.cff']: assert (root / f).is_file(), f'{f} is missing'
    assert 'Apache License' in (root / 'LICENSE').read_text() and 'Version 2.0' in (root / 'LICENSE').read_text()

def test_readme_links_resolve(root):
    "Every relative link and image of the README names a file of the repository (they are written relative to nbs/ in index.ipynb)."
    import re
    text = (root / 'README.md').read_text()
    targets = [t.split('#')[0] for t in re.findall(r'\]\(([^)\s]+)\)', text) if not t.startswith(('http://', 'https://', '#'))]
    assert targets and all((root / t).exists() for t in targets), [t for t in targets if not (root / t).exists()]
    assert from_root('[a](../tables/harc.md) ![b](../figures/x.png) [c](https://x/../y)') == '[a](tables/harc.md) ![b](figures/x.png) [c](https://x/../y)'


def quick_start(text: str) -> str:
    "The README's quick-start block: the main job's command and the test command, each under its comment."
    return re.search(r'## Quick start\n.*?```sh\n(.*?)```', text, re.S).group(1)


def test_the_test_commands_time_is_for_what_it_runs(root):
    block = quick_start((root / 'README.md').read_text())
    command = next(x for x in block.splitlines() if 'tools/run_all.sh' in x and not x.startswith('#'))
    comment = block[:block.index(command)].rsplit('\n\n', 1)[-1]
    assert 'minutes' in comment and 'PRISM_DOCS_CHECK=1' in comment, comment  # a time, and how to add the docs check
    if 'PRISM_DOCS_CHECK=1' not in command:  # then its time says the docs check is left out, not "included"
        assert 'docs check included' not in comment and 'skips that check' in comment, comment


def test_the_jupyterlab_lines_are_the_commands_in_the_guides_order(root):
    text = (root / 'README.md').read_text()
    block = re.search(r'\n(JupyterLab,.*?)```sh\n(.*?)```', text, re.S).group(2)
    commands = [x.split('#')[0].strip() for x in block.splitlines()]
    assert commands == ['nbdev_install_hooks', 'python -m prism_nb.jupyter install', 'jupyter lab'], commands
    assert 'jupyter lab --allow-root' in block and 'root shell' in block  # what a root shell runs instead
    guide = ''.join(''.join(c['source']) for c in json.loads((root / 'nbs' / 'guide.ipynb').read_text())['cells'])
    assert 'run it before `python -m prism_nb.jupyter install`' in guide and '`jupyter lab --allow-root`' in guide


# each term the README's first screen (and its findings) uses, and the words that define it where it first appears
DEFINED = {'Avg.': '**Avg.**: the mean', 'draws': '**draws** (random hyperparameter sets',
           'leads': 'PRISM **leads** or', 'PRISM higher on': '**PRISM higher on k of n seeds** counts',
           'default severity': '**default severity**, HAR-C',
           "paper's severity": "**paper's severity**, set so", 'Mid-P': 'named with -P, e.g. Mid-P',
           'r_b': 'r_b: the largest share', 'K = 4': 'worst of K = 4'}


def test_each_term_is_defined_where_the_readme_first_uses_it(root):
    text = (root / 'README.md').read_text()
    body = text[text.index('A companion to the paper'):]  # from the first paragraph on (the title's line uses none)
    for term, definition in DEFINED.items():
        assert definition in body, f'README.md no longer defines {term!r} as "{definition} ..."'
        first = body.index(term)
        assert first == body.index(definition) + definition.index(term), f'{term!r} is used before it is defined: {body[first - 200:first + 50]!r}'
    for word in ('knob', ' se ', 'On another CPU:'):  # jargon that once stood undefined, and a line that did not parse
        assert word not in body, word
