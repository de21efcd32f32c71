"""tools/check_docs.py on made-up pages: each layout check fails on the page it is there for (a table too wide for its
column at 1280 and at 1920 px, an index without a "Headline" entry in its contents panel or with the install details
before it, a link to a placeholder host) and passes on a page without the fault; tools/docs/prism.js fits a table that
is too wide at the default size; and the parts of tools/build_docs.py that make those pages (a heading that code
displays made a section, `#| hide` and `#| echo: false` honoured). The browser checks need Debian's chromium and
chromium-driver and are skipped without them."""
import json, os, subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'tools'))
import check_docs as cd

CHROMIUM = os.environ.get('CHROMIUM', '/usr/bin/chromium')
CHROMEDRIVER = os.environ.get('CHROMEDRIVER', '/usr/bin/chromedriver')
browser_needed = pytest.mark.skipif(not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()),
                                    reason='needs chromium and chromium-driver (apt-get install chromium chromium-driver)')

# a page laid out as the Jupyter Book site lays one out: the article (.bd-article) beside a contents panel
PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>made up</title><style>
body {{ margin: 0; font-family: sans-serif; }}
.bd-container {{ display: flex; }}
.bd-article {{ flex: 1; min-width: 0; padding: 0 16px; }}
.bd-sidebar-secondary {{ flex: 0 0 250px; }}
td {{ white-space: nowrap; }}
</style>{head}</head><body><div class="bd-container">
<main class="bd-article"><h1>Made up</h1>{article}</main>
<div class="bd-sidebar-secondary"><nav class="bd-toc-nav page-toc">{toc}</nav></div>
</div>{tail}</body></html>"""

def table(columns: int, width: str = '') -> str:
    head = ''.join(f'<th>c{i}</th>' for i in range(columns))
    row = ''.join('<td>87.02 ± 0.48</td>' for _ in range(columns))
    return f'<table{width}><tr><th></th>{head}</tr>' + ''.join(f'<tr><th>m{r}</th>{row}</tr>' for r in range(3)) + '</table>'

def toc(*names) -> str:
    return '<ul>' + ''.join(f'<li><a href="#{n.lower().replace(" ", "-")}">{n}</a></li>' for n in names) + '</ul>'

def page(article, toc_html=toc('Results'), head='', tail='') -> str:
    return PAGE.format(article=article, toc=toc_html, head=head, tail=tail)

# the column is set to 85% of the table's width at the default size; prism.js, where loaded, then fits it
FIT_TAIL = """<script>
const t = document.querySelector('table'), a = document.querySelector('.bd-article');
a.style.flex = 'none'; a.style.width = Math.round(Math.max(t.scrollWidth, t.getBoundingClientRect().width) * 0.85) + 'px';
</script>"""

@pytest.fixture(scope='module')
def site(tmp_path_factory):
    d = tmp_path_factory.mktemp('site')
    pages = {
        'wide.html': page('<h2 id="results">Results</h2>' + table(24)),  # too wide at any window
        'laptop.html': page('<h2 id="results">Results</h2>' + table(4, ' style="width: 1200px"')),  # fits at 1920 only
        'fits.html': page('<h2 id="results">Results</h2>' + table(4)),
        'scrolls.html': page('<h2 id="results">Results</h2><div style="overflow-x: auto">' + table(24) + '</div>'),
        'nofit.html': page(table(12), tail=FIT_TAIL),
        'fitted.html': page(table(12), tail=FIT_TAIL + '<script src="prism.js"></script>',
                            head='<link rel="stylesheet" href="prism.css">'),
        'no-headline/index.html': page('<h2 id="install">Install</h2>', toc('Quick start', 'Install')),
        'install-first/index.html': page('<h2 id="install">Install</h2><h2 id="headline-result">Headline result</h2>',
                                         toc('Install', 'Headline result')),
        'index.html': page('<h2 id="headline-result">Headline result</h2>', toc('Headline result')),
        'good/index.html': page('<h2 id="headline-result">Headline result</h2><h2 id="install">Install</h2>',
                                toc('Headline result', 'Quick start', 'Install')),
    }
    for name, html in pages.items():
        (d / name).parent.mkdir(parents=True, exist_ok=True)
        (d / name).write_text(html)
    for asset in ('prism.js', 'prism.css'): (d / asset).write_text((ROOT / 'tools' / 'docs' / asset).read_text())
    return d

@pytest.fixture(scope='module')
def browser(site, tmp_path_factory):
    srv, base = cd.serve(site)
    wd = cd.WebDriver(CHROMIUM, CHROMEDRIVER, str(tmp_path_factory.mktemp('profile')))
    yield wd, base
    wd.close(); srv.shutdown(); srv.server_close()

def problems_at(browser, name, width, checks=(cd.check_fit,)) -> list:
    wd, base = browser
    cd.resize(wd, width)
    wd.get(base + name)
    cd.wait(wd, cd.READY_JS, lambda r: r == 'complete', 10)
    cd.settle(wd, cd.TABLE_FIT_JS)
    problems = []
    for check in checks: check(wd, name, width, problems)
    return problems

@browser_needed
@pytest.mark.parametrize('width', cd.WIDTHS)
def test_a_table_wider_than_its_column_fails_naming_page_and_table(browser, width):
    problems = problems_at(browser, 'wide.html', width)
    assert any(p.startswith(f'wide.html at {width} px: table 1 (under \'Results\'') for p in problems), problems
    assert any('wider than the window' in p for p in problems), problems  # it also makes the page scroll sideways
    scrolled = problems_at(browser, 'scrolls.html', width)  # hidden in a scroll box: the page is fine, the table not
    assert len(scrolled) == 1 and 'does not fit' in scrolled[0] and 'box' in scrolled[0], scrolled

@browser_needed
def test_each_window_width_is_checked(browser):
    assert problems_at(browser, 'laptop.html', 1280) and not problems_at(browser, 'laptop.html', 1920)
    assert not problems_at(browser, 'fits.html', 1280) and not problems_at(browser, 'fits.html', 1920)

@browser_needed
def test_prism_js_fits_a_table_too_wide_at_the_default_size(browser):
    assert problems_at(browser, 'nofit.html', 1280)  # the same table and column without prism.js
    assert not problems_at(browser, 'fitted.html', 1280)
    wd, _ = browser
    assert wd.js("return document.querySelector('table').className").startswith('prism-compact')

@browser_needed
@pytest.mark.parametrize('width', cd.WIDTHS)
def test_the_index_contents_panel_lists_the_headline_before_install(browser, width):
    check = (cd.check_headline,)
    missing = problems_at(browser, 'no-headline/index.html', width, check)
    assert len(missing) == 1 and 'no entry for a heading that starts with "Headline"' in missing[0], missing
    late = problems_at(browser, 'install-first/index.html', width, check)
    assert len(late) == 1 and "lists 'Install' before 'Headline result'" in late[0], late
    assert problems_at(browser, 'good/index.html', width, check) == []

def test_links_to_placeholders_fail(tmp_path):
    (tmp_path / 'a.html').write_text('<a href="https://github.com/prism-nb/prism_nb/blob/main/prism_nb/core.py#L3">s</a>'
                                     '<a href="http://SOURCE.md">SOURCE.md</a><a href="https://prism-nb.github.io/prism_nb/">x</a>')
    (tmp_path / 'b.html').write_text('<a href="https://physionet.org/content/challenge-2012/1.0.0/">p</a>'
                                     '<a href="_repo/prism_nb/core.py.html#L3">source</a><a href="guide.html#data">g</a>')
    problems = []
    assert cd.check_placeholder_links(tmp_path, problems) == 3
    assert all(p.startswith('a.html: link to ') for p in problems), problems
    assert any('SOURCE.md' in p and 'file name' in p for p in problems), problems

@browser_needed
def test_the_command_fails_on_a_bad_page(site):
    r = subprocess.run([sys.executable, str(ROOT / 'tools' / 'check_docs.py'), '--docs', str(site), '--pages', 'wide.html',
                        '--chromium', CHROMIUM, '--chromedriver', CHROMEDRIVER], capture_output=True, text=True)
    assert r.returncode == 1, r.stdout
    for width in cd.WIDTHS: assert f'FAIL: wide.html at {width} px: table 1 ' in r.stdout, r.stdout

# ---- tools/build_docs.py: what it does to the notebooks for the pages above
def build_docs():
    import build_docs
    return build_docs

def test_a_heading_that_code_displays_becomes_a_section_of_the_page():
    bd = build_docs()
    outputs = [{'output_type': 'display_data', 'metadata': {},
                'data': {'text/markdown': '## Headline result\n\nHAR-C accuracy (%), CNN.\n', 'text/plain': '<Markdown>'}}]
    assert bd.leading_headings(outputs) == '## Headline result'
    assert outputs[0]['data']['text/markdown'] == 'HAR-C accuracy (%), CNN.\n'
    assert bd.leading_headings([{'output_type': 'display_data', 'data': {'text/markdown': 'text\n\n## Later'}}]) == ''
    nb = {'metadata': {}, 'cells': [
        {'cell_type': 'markdown', 'id': 'a', 'metadata': {}, 'source': '# prism_nb'},
        {'cell_type': 'code', 'id': 'b', 'metadata': {}, 'source': '#| echo: false\nshow()', 'execution_count': 1,
         'outputs': [{'output_type': 'display_data', 'metadata': {},
                      'data': {'text/markdown': '## Headline result\n\nnumbers', 'text/plain': ''}}]},
        {'cell_type': 'code', 'id': 'c', 'metadata': {}, 'source': '#| hide\ntest_eq(1, 1)', 'execution_count': 2, 'outputs': []},
        {'cell_type': 'code', 'id': 'd', 'metadata': {}, 'source': '#|hide\nassert True', 'execution_count': 3, 'outputs': []},
        {'cell_type': 'markdown', 'id': 'e', 'metadata': {}, 'source': '## Install'}]}
    prepared, _ = bd.prepare(json.loads(json.dumps(nb)), 'index')
    shown = [(c['cell_type'], c['source'], c['metadata'].get('tags', [])) for c in prepared['cells']]
    assert shown == [('markdown', '# prism_nb', []), ('markdown', '## Headline result', []),
                     ('code', 'show()', ['remove-input']), ('markdown', '## Install', [])], shown
    assert prepared['cells'][2]['outputs'][0]['data']['text/markdown'] == 'numbers'
