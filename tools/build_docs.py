"""Build the docs site into _docs/ with Jupyter Book 1 (Sphinx + myst-nb) from the notebooks' committed outputs:
nothing is executed (`execute_notebooks: off` in tools/docs/_config.yml). tools/build_docs.sh runs this where
Quarto is not installed (and nbdev_docs where it is).

Jupyter Book reads a temporary copy of nbs/ prepared the way nbdev prepares notebooks for Quarto, in text alone:
- each page is named as nbdev names it (`02_sampling.ipynb` -> `sampling.html`), so nbdev's doc links, which point
  at `sampling.html#budget_steps`, and the Quarto site's addresses work here too;
- the cells nbdev leaves out of the docs are left out (`#| hide`, `export`, `exporti`, `default_exp`,
  `include: false`); `echo: false` and `output: false` become myst-nb's `remove-input` and `remove-output`;
- a `show_doc` cell becomes the Markdown it displays (what nbdev's `output: asis` does), without its leading `---`
  (docutils refuses a section that begins with a transition); an exported name with no `show_doc` cell gets what
  nbdev would show_doc without running anything: a heading and the definition's source;
- each of those API entries gets nbdev's anchor (`budget_steps`, `arm.update`) as its id, which Sphinx's own ids
  (`budget-steps`) cannot spell: the prepared Markdown marks it (`<div id="budget_steps"></div>` before the heading)
  and `nbdev_anchors` below, loaded by Sphinx, moves it onto the heading's section;
- backticked names become nbdev's doc links (`NbdevLookup.linkify`), made relative for this site (a method with no
  entry of its own links to its class);
- links written relative to nbs/, as JupyterLab and the README need them (`../tables/harc.md`,
  `../nbs/05_prism.ipynb`, `![...](../figures/x.png)`), become a notebook's page, an image copied into the site, or
  any other file of the repository on its host (`repo_links`);
- the table of contents comes from nbs/sidebar.yml, which must list every notebook once (a scratch notebook, one git
  does not track and the sidebar does not list, such as JupyterLab's Untitled.ipynb, is left out with a note);
- a heading that opens a code cell's Markdown output (`display(Markdown('## Headline result ...'))`) becomes a
  Markdown cell before the cell: myst-nb renders a heading inside an output as a rubric, no section, so the page's
  contents panel would not list it (`leading_headings`);
- tools/docs/*.css and *.js (the site's style sheet: long code lines wrap; tables fit their column, set compact
  where they must be and given room from a sidebar where that is not enough, a number cell never wrapping; and
  click-to-enlarge: a figure shown narrower than its natural size opens full size on click) go into the book's
  `_static/`, where Jupyter Book adds them to every page;
- the results and study pages (`WIDE_PAGES`: paper, results, tuning, bunching, paper_severity) get a wide layout (a marker that
  tools/docs/prism.css reads: no right-hand table of contents, the article as wide as the window allows), and on
  `OUTPUT_ONLY_PAGES` (paper, results) every code cell is `remove-input` (only outputs shown; a cell without outputs
  is left out); the notebooks themselves are not touched;
- source links: the repository has no public URL (settings.ini's git_url, github.com/prism-nb/prism_nb, does not
  exist), so show_doc's `[source]` links and links to other repository files (`../tables/harc.md`, LICENSE) point at
  a copy of the file within the site: `_repo/<path>.html` (Pygments-highlighted, a line's anchor `#L12` as on
  GitHub; Markdown files rendered), an image or PDF copied as it is (`repo_pages`); so does a source link written
  relative to nbs/ in HTML (`<a href="../prism_nb/sampling.py#L80">`, which JupyterLab opens). tools/check_docs.py
  fails on any link to github.com/prism-nb or another placeholder;
- each matplotlib PNG the site shows (an image output, or a ../figures/*.png) is tagged with a PNG tEXt chunk
  `prism:min-font-pt`: the smallest font size, in points, that the code that drew it uses (`FigureFonts`), which
  tools/check_docs.py turns into the size the reader sees.
Sphinx's warnings are shown and counted; the build fails on any (the site has none).

With --quarto (tools/build_docs.sh, where Quarto is installed): nbdev_docs itself, in this process, so that one rule
of nbdev's can be changed: to render show_doc, nbdev runs exported cells, show_doc cells and any cell with an import,
including a cell that mixes imports with other code (its FAQ warns about them); the notebooks' inline tests have such
cells that depend on earlier test cells and fail when run alone, so here only cells made of imports alone run. Its
source links point at the site's copies of the files as above, and its doc links are relative (`quarto`).

Usage: python tools/build_docs.py [--keep DIR] [--quarto]   (--keep: prepare the book in DIR and keep it, to look at)"""
import sys
from _cli import parser


def parse(argv):
    ap = parser(__doc__)
    ap.add_argument('--keep', help='prepare the book in this folder and keep it')
    ap.add_argument('--quarto', action='store_true', help="nbdev_docs (needs Quarto)")
    return ap.parse_args(argv)


if __name__ == '__main__':
    ARGS = parse(sys.argv[1:])  # a bad command line is refused before nbdev is imported

import ast, base64, copy, html, json, re, shutil, struct, subprocess, sys, tempfile, time, zlib
from pathlib import Path

import yaml
from nbdev.config import get_config
from nbdev.doclinks import NbdevLookup, _nbpath2html
from nbdev.showdoc import showdoc_nm

ROOT = Path(__file__).resolve().parent.parent
NBS, DOCS, CONFIG = ROOT / 'nbs', ROOT / '_docs', Path(__file__).resolve().parent / 'docs' / '_config.yml'
cfg = get_config(path=ROOT)
SITE_URL = cfg.doc_host.rstrip('/') + '/' + cfg.doc_baseurl.strip('/') + '/'  # where nbdev's doc links point
REPO_URL = f"{cfg.git_url.rstrip('/')}/blob/{cfg.branch}/"  # where nbdev's source links point (no such site: see repo_pages)
REPO_DIR = '_repo'  # a repository file `rel` is shown at _docs/_repo/<rel>.html (text) or _docs/_repo/<rel> (image, PDF)
WIDE_PAGES = {'paper', 'results', 'tuning', 'bunching', 'paper_severity'}  # the results and study pages: a wide layout (tools/docs/prism.css)
OUTPUT_ONLY_PAGES = {'paper', 'results'}  # their code cells hidden, outputs shown
WIDE_MARKER = '<div class="prism-wide-page"></div>'  # prism.css: `body:has(.prism-wide-page)` widens the page

def page(nb_name: str) -> str: return _nbpath2html(Path(nb_name)).stem  # 02_sampling.ipynb -> sampling
def text(x) -> str: return ''.join(x) if isinstance(x, list) else (x or '')

def tracked_notebooks():
    "The notebooks of nbs/ that git tracks (None where git or the repository's .git is not at hand)."
    try: r = subprocess.run(['git', 'ls-files', '--', f'{NBS.name}/*.ipynb'], cwd=ROOT, capture_output=True, text=True)
    except OSError: return None
    return {Path(l).name for l in r.stdout.split()} if r.returncode == 0 else None

def sidebar() -> list:
    """The notebooks in nbs/sidebar.yml in order, as (section or None, notebook); each notebook must be listed once.
    A scratch notebook (one that git does not track, or an `Untitled*.ipynb` where there is no git, and that
    nbs/sidebar.yml does not list: JupyterLab's File > New puts one in nbs/) is left out, with a one-line note."""
    entries = []
    def walk(items, section):
        for it in items:
            if isinstance(it, str): entries.append((section, it))
            else: walk(it.get('contents', []), it.get('section'))
    walk(yaml.safe_load((NBS / 'sidebar.yml').read_text())['website']['sidebar']['contents'], None)
    names, on_disk, tracked = [n for _, n in entries], sorted(p.name for p in NBS.glob('*.ipynb')), tracked_notebooks()
    scratch = sorted(n for n in set(on_disk) - set(names) if (n not in tracked if tracked is not None else n.startswith('Untitled')))
    why = 'git does not track it' if tracked is not None else 'named Untitled'
    for n in scratch: print(f'docs: leaving out nbs/{n}, a scratch notebook ({why}, nbs/sidebar.yml does not list it); '
                            'list it in nbs/sidebar.yml to publish it')
    missing, extra, twice = set(on_disk) - set(names) - set(scratch), set(names) - set(on_disk), {n for n in names if names.count(n) > 1}
    if missing or extra or twice or names[0] != 'index.ipynb':
        sys.exit(f'nbs/sidebar.yml must list each notebook of nbs/ once, index.ipynb first: add {sorted(missing)} to it, '
                 f'remove {sorted(extra)} (not in nbs/), list once {sorted(twice)}')
    return entries

def toc(entries) -> dict:
    "Jupyter Book's _toc.yml: index.ipynb the root, each sidebar section a captioned part, in the sidebar's order."
    parts = []
    for section, nb in entries[1:]:
        if not parts or parts[-1].get('caption') != section:
            parts.append({'caption': section, 'chapters': []} if section else {'chapters': []})
        parts[-1]['chapters'].append({'file': page(nb)})
    return {'format': 'jb-book', 'root': page(entries[0][1]), 'parts': parts}

# ---- cells
_re_dir = re.compile(r'^\s*#\|\s?(.*?)\s*$')
def directives(src: str):
    "nbdev/Quarto `#|` lines at the top of a cell as {key: value}, and the source without them."
    lines, d = src.splitlines(), {}
    while lines and _re_dir.match(lines[0]):
        key, _, value = _re_dir.match(lines.pop(0)).group(1).partition(' ')
        d[key.rstrip(':')] = value.strip().strip('"\'').lower()
    return d, '\n'.join(lines).strip('\n')

def md_cell(source: str, id: str) -> dict: return {'cell_type': 'markdown', 'id': id, 'metadata': {}, 'source': source}

def anchor(name: str) -> str: return f'<div id="{name.lower()}"></div>\n\n'  # nbdev's anchor: the name, lower case

def repo_href(rel: str, frag: str = '') -> str:
    "Where the site shows the repository's file `rel` (a path from the repository root): see `repo_pages`."
    binary = Path(rel).suffix.lower() in BINARY_SUFFIXES
    return f'{REPO_DIR}/{rel}{"" if binary else ".html"}{"" if binary else frag}'

# the committed show_doc outputs link to settings.ini's git_url as it was when they ran (the placeholder below, if
# git_url has changed since): both are taken for the repository's files
PLACEHOLDER_REPO_URL = 'https://github.com/prism-nb/prism_nb/blob/main/'
_re_repo_url = re.compile('(?:' + '|'.join(map(re.escape, sorted({REPO_URL, PLACEHOLDER_REPO_URL}))) + r')([^)\s"\'#]+)(#[^)\s"\']*)?')
def local_repo_urls(md: str, files: set) -> str:
    "Links to the repository on its (nonexistent) host as links to the site's copy of the file; the file added to `files`."
    def sub(m):
        files.add(m.group(1)); return repo_href(m.group(1), m.group(2) or '')
    return _re_repo_url.sub(sub, md)

_re_source_link = re.compile(r'^\[source\]\(([^)\s]+)\)\{[^}]*\}\s*$', re.M)
_re_heading = re.compile(r'^#{1,6}\s+(.+?)\s*$', re.M)
def show_doc_markdown(md: str) -> tuple:
    "A show_doc output as a Markdown cell: its anchor first, no leading `---`, the source link as HTML."
    md = re.sub(r'^\s*---\s*\n', '', md)
    md = _re_source_link.sub(lambda m: f'<a class="source-link" href="{m.group(1)}" '
                             'style="float:right; font-size:smaller">source</a>', md)
    h = _re_heading.search(md)
    name = re.sub(r'[`\\]', '', h.group(1)) if h else None
    return (anchor(name) + md if name else md), name

def definitions(src: str) -> list:
    "The public functions and classes a cell defines, as (name show_doc gives them, source with decorators)."
    try: tree = ast.parse(src)
    except SyntaxError: return []
    lines, res = src.splitlines(), []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not node.name.startswith('_'):
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            res.append((showdoc_nm(node), '\n'.join(lines[start - 1:node.end_lineno])))
    return res

def is_show_doc(src: str) -> bool:
    lines = [l for l in src.splitlines() if l.strip() and not l.lstrip().startswith('#')]
    return bool(lines) and all(re.match(r'^show_doc\(.*\)\s*$', l) for l in lines)

def headings(md: str) -> list:
    "Levels of the Markdown headings outside fenced code."
    levels, fence = [], False
    for l in md.splitlines():
        if l.startswith('```'): fence = not fence
        elif not fence and (m := re.match(r'^(#{1,6})\s', l)): levels.append(len(m.group(1)))
    return levels

def shift_headings(md: str, top: int) -> str:
    "Headings moved up so the first is at most level `top`: show_doc's `###` under a page title (`#`) would skip one."
    levels = headings(md)
    by = max(0, levels[0] - top) if levels else 0
    if not by: return md
    fence, out = False, []
    for l in md.splitlines():
        if l.startswith('```'): fence = not fence
        elif not fence and re.match(r'^#{1,6}\s', l): l = l[by:]
        out.append(l)
    return '\n'.join(out)

_re_leading_headings = re.compile(r'\A\s*((?:#{1,6}[ \t]+\S[^\n]*\n?\s*)+)')
def leading_headings(outputs: list) -> str:
    """The Markdown headings that open a cell's first Markdown output (`display(Markdown('## Headline ...'))`), taken
    out of it (the output keeps the rest). myst-nb renders a heading inside an output as a rubric, which is no section:
    the page's contents panel would not list it. nbdev's Quarto site lists it; here it becomes a Markdown cell of its
    own before the cell, so it does too."""
    first = next((o for o in outputs if 'text/markdown' in o.get('data', {})), None)
    if first is None or first is not next((o for o in outputs if o.get('data') or o.get('text')), None): return ''
    md = text(first['data']['text/markdown'])
    m = _re_leading_headings.match(md)
    if not m: return ''
    first['data']['text/markdown'] = md[m.end():]
    return m.group(1).strip()

def prepare(nb: dict, pagename: str = '', fonts=None) -> tuple:
    "The notebook as its docs page `pagename` (see the module's docstring) and the anchors of its API entries."
    shown = {show_doc_markdown(text(o.get('data', {}).get('text/markdown')))[1] for c in nb['cells']
             if c['cell_type'] == 'code' and is_show_doc(text(c['source'])) for o in c.get('outputs', [])}
    cells, anchors, level, section = [], set(), 1, ''  # level: the last heading's, so an entry's heading is at most one below
    def entry(md, name, cell_id):
        nonlocal level
        md = shift_headings(md, level + 1)
        level = (headings(md) or [level])[-1]
        anchors.add(name.lower()); cells.append(md_cell(md, f'{cell_id}-{len(anchors)}'))
    for c in nb['cells']:
        cell_id = c.get('id') or f'cell{len(cells)}'
        if c['cell_type'] == 'markdown':
            cells.append(md_cell(text(c['source']), cell_id))
            if headings(cells[-1]['source']): section = '\n'.join(l for l in cells[-1]['source'].splitlines() if l.startswith('#'))
            level = (headings(cells[-1]['source']) or [level])[-1]
            continue
        if c['cell_type'] != 'code': continue
        d, src = directives(text(c['source']))
        if d.keys() & {'hide', 'default_exp', 'exporti'} or d.get('include') == 'false': continue
        if d.keys() & {'export', 'exports'}:
            for name, code in definitions(src):
                if name not in shown: entry(f'{anchor(name)}{"####" if "." in name else "###"} {name}\n\n```python\n{code}\n```', name, cell_id)
            if 'exports' not in d: continue
        if is_show_doc(src):
            for o in c.get('outputs', []):
                md, name = show_doc_markdown(text(o.get('data', {}).get('text/markdown')))
                if name: entry(md, name, cell_id)
            continue
        if not src and not c.get('outputs'): continue
        tags = [t for k, v, t in [('echo', 'false', 'remove-input'), ('output', 'false', 'remove-output'),
                                  ('code-fold', None, 'hide-input')] if k in d and (v is None or d[k] == v)]
        if pagename in OUTPUT_ONLY_PAGES:  # the results pages show what the code made, not the code
            if 'remove-output' in tags or not c.get('outputs'): continue
            tags = [t for t in tags if t != 'hide-input'] + ['remove-input'] * ('remove-input' not in tags)
        if fonts is not None: fonts.tag_outputs(c, src, nb, section)
        outputs = copy.deepcopy(c.get('outputs', []))
        if 'remove-output' not in tags and (lead := leading_headings(outputs)):  # a heading the code displays
            cells.append(md_cell(lead, f'{cell_id}-heading'))                    # becomes a section of the page
            section, level = lead, headings(lead)[-1]
        cells.append({'cell_type': 'code', 'execution_count': c.get('execution_count'), 'id': cell_id,
                      'metadata': {'tags': tags} if tags else {}, 'outputs': outputs, 'source': src})
    if pagename in WIDE_PAGES: cells.append(md_cell(WIDE_MARKER, 'prism-wide-page'))
    meta = {'kernelspec': nb['metadata'].get('kernelspec', {'name': 'python3', 'display_name': 'Python 3', 'language': 'python'}),
            'language_info': {'name': 'python', 'pygments_lexer': 'ipython3'}}
    return {'cells': cells, 'metadata': meta, 'nbformat': 4, 'nbformat_minor': 5}, anchors

# ---- nbdev's doc links, within this site
_re_site_link = re.compile(r'\]\(' + re.escape(SITE_URL) + r'([^)#\s]+)(#[^)\s]*)?\)')
def linker(anchors: dict):
    lookup = NbdevLookup()
    def local(m):
        target, frag = m.group(1), (m.group(2) or '#')[1:]
        ids = anchors.get(Path(target).stem, set())
        if frag and frag not in ids: frag = frag.split('.')[0] if frag.split('.')[0] in ids else ''  # a method: its class
        return f']({target}{"#" + frag if frag else ""})'
    return lambda md: _re_site_link.sub(local, lookup.linkify(md) or '')

_re_repo_link = re.compile(r'(!?)\[([^\]]*)\]\(\.\./([^)\s#]+)(#[^)\s]*)?\)')
def repo_links(md: str, images: set, files: set) -> str:
    """Links relative to nbs/ (`../tables/harc.md`) as this site needs them: a notebook's link goes to its page, an
    image stays relative and is added to `images` (copied into the site by `build`), any other file links to the
    site's copy of it (added to `files`, made by `repo_pages`); links to the repository's host, to that copy too."""
    def sub(m):
        bang, label, target, frag = m.group(1), m.group(2), m.group(3), m.group(4) or ''
        if bang: images.add(target); return f'![{label}]({target})'
        if target.startswith('nbs/') and target.endswith('.ipynb'): return f'[{label}]({page(Path(target).name)}.html{frag})'
        files.add(target)
        return f'[{label}]({repo_href(target, frag)})'
    return local_repo_urls(html_repo_links(_re_repo_link.sub(sub, md), files), files)

_re_html_repo_link = re.compile(r'(\bhref=["\'])\.\./([^"\'#\s]+)(#[^"\'\s]*)?(["\'])')
def html_repo_links(markup: str, files: set) -> str:
    """`href="../prism_nb/sampling.py#L80"` in HTML (a source link written relative to nbs/, which JupyterLab opens):
    a notebook's page, or the site's copy of the file (added to `files`)."""
    def sub(m):
        start, target, frag, end = m.group(1), m.group(2), m.group(3) or '', m.group(4)
        if target.startswith('nbs/') and target.endswith('.ipynb'): return f'{start}{page(Path(target).name)}.html{frag}{end}'
        files.add(target)
        return f'{start}{repo_href(target, frag)}{end}'
    return _re_html_repo_link.sub(sub, markup)

def link(nb: dict, linkify, images: set, files: set) -> None:
    for c in nb['cells']:
        if c['cell_type'] == 'markdown': c['source'] = linkify(repo_links(c['source'], images, files))
        for o in c.get('outputs', []):
            data = o.get('data', {})
            if 'text/markdown' in data: data['text/markdown'] = linkify(repo_links(text(data['text/markdown']), images, files))
            if 'text/html' in data: data['text/html'] = local_repo_urls(html_repo_links(text(data['text/html']), files), files)

_re_md_image = re.compile(r'!\[[^\]]*\]\([^)\s]+\)')
def figures(nb: dict) -> int:
    "Images a prepared notebook shows: image outputs, and images in its Markdown (cells and Markdown outputs)."
    shown = [c for c in nb['cells'] if 'remove-output' not in c['metadata'].get('tags', [])]
    outputs = sum(any(k.startswith('image/') for k in o.get('data', {})) for c in shown if c['cell_type'] == 'code' for o in c['outputs'])
    markdown = [c['source'] for c in shown if c['cell_type'] == 'markdown']
    markdown += [text(o['data']['text/markdown']) for c in shown if c['cell_type'] == 'code' for o in c['outputs'] if 'text/markdown' in o.get('data', {})]
    return outputs + sum(len(_re_md_image.findall(m)) for m in markdown)

def build(book: Path) -> int:
    t0 = time.time()
    entries = sidebar()
    pages, anchors, fonts = {}, {}, FigureFonts()
    for _, nb in entries:
        pages[page(nb)], anchors[page(nb)] = prepare(json.loads((NBS / nb).read_text()), page(nb), fonts)
    linkify, images, files = linker(anchors), set(), set()
    for name, nb in pages.items():
        link(nb, linkify, images, files)
        (book / f'{name}.ipynb').write_text(json.dumps(nb, indent=1, ensure_ascii=False))
    for rel in sorted(images):
        if not (ROOT / rel).is_file(): print(f'FAIL: a notebook shows ../{rel}, which does not exist'); return 1
        (book / rel).parent.mkdir(parents=True, exist_ok=True)
        data = (ROOT / rel).read_bytes()
        (book / rel).write_bytes(fonts.tag_figure(data, rel) if rel.endswith('.png') else data)
    missing = sorted(f for f in files if not (ROOT / f).is_file())  # linked as they are: tools/check_docs.py fails on them
    if missing: print(f'WARNING: the notebooks link to repository files that do not exist (their links will 404): {missing}')
    files -= set(missing)
    (book / '_static').mkdir(exist_ok=True)
    for asset in sorted([*CONFIG.parent.glob('*.css'), *CONFIG.parent.glob('*.js')]): shutil.copy(asset, book / '_static')
    config = yaml.safe_load(CONFIG.read_text())
    config['sphinx']['local_extensions'] = {Path(__file__).stem: str(Path(__file__).parent)}  # setup() below
    (book / '_config.yml').write_text(yaml.safe_dump(config, sort_keys=False))
    shutil.copy(CONFIG.parent / 'favicon.svg', book)
    (book / '_toc.yml').write_text(yaml.safe_dump(toc(entries), sort_keys=False))
    t1 = time.time()
    out = tempfile.mkdtemp(prefix='jupyter-book-')
    try:
        r = subprocess.run([sys.executable, '-c', 'from jupyter_book.cli.main import main; main()', 'build', str(book), '--path-output', out,
                            '--builder', 'html', '--keep-going'], capture_output=True, text=True)
        log = r.stdout + r.stderr
        warnings = [l for l in log.splitlines() if re.search(r'\bWARNING\b|\bERROR\b', l)]
        html = Path(out) / '_build' / 'html'
        if r.returncode or not (html / 'index.html').exists():
            print(log[-6000:]); print('FAIL: jupyter-book build failed'); return 1
        shutil.rmtree(DOCS, ignore_errors=True)
        shutil.copytree(html, DOCS, ignore=shutil.ignore_patterns('.buildinfo', '_sources'))
        (DOCS / '.nojekyll').touch()  # GitHub Pages: serve _static/ and _images/ as they are
        repo_pages(files)
    finally: shutil.rmtree(out, ignore_errors=True)
    for w in warnings: print(w)
    n_fig = sum(map(figures, pages.values()))
    n_img = sum(len(re.findall(r'<img [^>]*src="_images/', (DOCS / f'{name}.html').read_text())) for name in pages)
    print(f'{DOCS.relative_to(ROOT)}/: {len(pages)} pages, {sum(map(len, anchors.values()))} API entries, {n_img} of '
          f'{n_fig} figures ({fonts.tagged} tagged with their smallest font), {len(files)} repository files shown in '
          f'{REPO_DIR}/, {len(warnings)} Sphinx warnings (preparing {t1 - t0:.1f} s, jupyter-book {time.time() - t1:.1f} s)')
    if n_img != n_fig: print(f'FAIL: the notebooks show {n_fig} figures, the site {n_img}')
    return 1 if warnings or n_img != n_fig else 0

# ---- the repository's files within the site (it has no public URL)
BINARY_SUFFIXES = {'.png', '.jpg', '.jpeg', '.gif', '.svg', '.pdf', '.parquet', '.pt', '.npz', '.gz', '.zip'}
REPO_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} - prism_nb</title><style>
body {{ font-family: system-ui, sans-serif; margin: 1.5rem; color: #222; }}
pre {{ font-size: 0.85rem; line-height: 1.45; }} pre > span {{ display: block; }} pre > span:target {{ background: #fff4b3; }}
table {{ border-collapse: collapse; }} td, th {{ border: 1px solid #ccc; padding: 0.2rem 0.5rem; white-space: nowrap; }}
{css}</style></head><body>
<p><a href="{up}index.html">prism_nb</a> / {crumbs} &nbsp; <small>(the repository's file, as of this build)</small></p>
{body}
</body></html>
"""

def repo_pages(files: set) -> None:
    """Each repository file the site links to, within the site: a text file as `_repo/<path>.html`, highlighted, each
    line an anchor `L<n>` as on GitHub (a Markdown file rendered, its text below); an image or PDF copied as it is."""
    from markdown_it import MarkdownIt
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import TextLexer, guess_lexer_for_filename
    from pygments.util import ClassNotFound
    css = HtmlFormatter().get_style_defs('.highlight')
    for rel in sorted(files):
        out = DOCS / REPO_DIR / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        if Path(rel).suffix.lower() in BINARY_SUFFIXES: shutil.copy(ROOT / rel, out); continue
        src = (ROOT / rel).read_text(errors='replace')
        try: lexer = guess_lexer_for_filename(rel, src)
        except ClassNotFound: lexer = TextLexer()
        code = highlight(src, lexer, HtmlFormatter(linespans='L', wrapcode=False))
        code = re.sub(r'<span id="L-(\d+)">', r'<span id="L\1">', code)  # GitHub's anchors: #L12
        body = (MarkdownIt('commonmark').enable('table').render(src) + '<hr>' if rel.endswith('.md') else '') + code
        up = '../' * (rel.count('/') + 1)
        crumbs = ' / '.join(html.escape(p) for p in rel.split('/'))
        (out.parent / (out.name + '.html')).write_text(REPO_PAGE.format(title=html.escape(rel), up=up, crumbs=crumbs,
                                                                        css=css, body=body))

# ---- the smallest font of each figure, for tools/check_docs.py
def png_text(data: bytes, items: dict) -> bytes:
    "The PNG with tEXt chunks `items` added before its image data (any earlier chunk of the same key dropped)."
    out, i, keys = [data[:8]], 8, set(items)
    while i < len(data):
        n = struct.unpack('>I', data[i:i + 4])[0]
        kind, chunk = data[i + 4:i + 8], data[i:i + 12 + n]
        if kind == b'IDAT' and items:
            for k, v in items.items():
                d = k.encode('latin-1') + b'\0' + v.encode('latin-1', 'replace')
                out.append(struct.pack('>I', len(d)) + b'tEXt' + d + struct.pack('>I', zlib.crc32(b'tEXt' + d)))
            items = {}
        if not (kind == b'tEXt' and chunk[8:].split(b'\0')[0].decode('latin-1') in keys): out.append(chunk)
        i += 12 + n
    return b''.join(out)

class FigureFonts:
    """The smallest font size (pt) in the code that drew each figure: the style's smallest text (`paper_style()`'s
    `PAPER_RC` in prism_nb/report.py where the notebook applies it, else matplotlib's defaults: 10 pt ticks and
    legend) and every size written out (`fontsize=`, `labelsize=`, `title_fontsize=`; named sizes such as 'small' as
    matplotlib scales them) in the cell and in the library functions it calls (prism_nb/*.py, followed through
    their calls). A size written in a branch the figure did not take still counts: the estimate errs small."""
    KEYWORDS = {'fontsize', 'labelsize', 'title_fontsize'}
    NAMED = {'xx-small': .579, 'x-small': .694, 'small': .833, 'smaller': .833}
    MPL_DEFAULT = 10.0  # matplotlib's font.size; ticks and legend are 'medium'

    def __init__(self):
        self.funcs, self.calls, self.paper = {}, {}, 8.0
        for py in sorted((ROOT / cfg.lib_path).glob('*.py')):
            if py.name.startswith('_'): continue
            tree = ast.parse(py.read_text())
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self.funcs[node.name] = self.funcs.get(node.name, set()) | self.sizes(node)
                    self.calls[node.name] = self.calls.get(node.name, set()) | self.called(node)
                if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == 'PAPER_RC' for t in node.targets):
                    rc = ast.literal_eval(node.value)
                    self.paper = min(v for k, v in rc.items() if isinstance(v, (int, float)) and k != 'figure.titlesize')
        self.tagged, self.figure_cells = 0, {}

    def sizes(self, node) -> set:
        res = set()
        for n in ast.walk(node):
            if isinstance(n, ast.keyword) and n.arg in self.KEYWORDS:
                for c in ast.walk(n.value):
                    if isinstance(c, ast.Constant) and isinstance(c.value, (int, float)) and not isinstance(c.value, bool):
                        res.add(float(c.value))
                    elif isinstance(c, ast.Constant) and c.value in self.NAMED: res.add(('named', self.NAMED[c.value]))
        return res

    @staticmethod
    def called(node) -> set:
        return {n.func.id if isinstance(n.func, ast.Name) else n.func.attr for n in ast.walk(node)
                if isinstance(n, ast.Call) and isinstance(n.func, (ast.Name, ast.Attribute))}

    def reach(self, names: set) -> set:
        seen, todo = set(), [n for n in names if n in self.funcs]
        while todo:
            f = todo.pop()
            if f in seen: continue
            seen.add(f); todo += [g for g in self.calls.get(f, ()) if g in self.funcs and g not in seen]
        return seen

    def smallest(self, src: str, nb: dict) -> tuple:
        "The smallest font (pt) of what the cell `src` of notebook `nb` draws, and where that figure comes from."
        styled = any('paper_style()' in text(c['source']) for c in nb['cells'] if c['cell_type'] == 'code')
        base = self.paper if styled else self.MPL_DEFAULT
        try: tree = ast.parse(src)
        except SyntaxError: tree = ast.parse('')
        funcs = self.reach(self.called(tree))
        pt = lambda s: round(s[1] * base, 2) if isinstance(s, tuple) else s
        where = {'the cell': self.sizes(tree), **{f'{f}()': self.funcs[f] for f in sorted(funcs)}}
        size = min([base] + [pt(s) for v in where.values() for s in v])
        why = f"{'paper_style' if styled else 'matplotlib defaults'}: {base:g} pt"
        if size < base: why += f"; {size:g} pt in {', '.join(w for w, v in where.items() if size in map(pt, v))}"
        return size, why

    def tag_outputs(self, cell: dict, src: str, nb: dict, context: str = '') -> None:
        """Each PNG output of the cell tagged with its smallest font; a cell that saves figures (`keep_figure`,
        `save_figure`) remembered for each name it quotes or its section's heading (`context`) names."""
        pngs = [o for o in cell.get('outputs', []) if 'image/png' in o.get('data', {})]
        saves = re.search(r'\b(keep_figure|save_figure)\(', src)
        if not pngs and not saves: return
        size, why = self.smallest(src, nb)
        if saves:
            for stem in re.findall(r"['\"]([A-Za-z0-9_-]+)['\"]", src) + re.findall(r'[A-Za-z0-9_-]+', context):
                self.figure_cells.setdefault(stem, (size, why))
        for o in pngs:
            data = png_text(base64.b64decode(text(o['data']['image/png'])), {'prism:min-font-pt': f'{size:g}', 'prism:font-source': why})
            o['data']['image/png'] = base64.b64encode(data).decode(); self.tagged += 1

    def tag_figure(self, data: bytes, rel: str) -> bytes:
        "A figures/*.png tagged from the cell (paper.ipynb) that saves it, if known; else left as it is."
        if Path(rel).stem not in self.figure_cells: return data
        size, why = self.figure_cells[Path(rel).stem]
        self.tagged += 1
        return png_text(data, {'prism:min-font-pt': f'{size:g}', 'prism:font-source': why})

# ---- where Quarto is installed
def runs_for_docs(cell) -> bool:
    "Which cells nbdev's `exec_show_docs` runs: exported cells, `show_doc` cells, and cells of imports alone."
    import nbdev.processors
    if cell.cell_type != 'code' or nbdev.processors.cell_lang(cell) != 'python' or not cell.source: return False
    if 'nbdev_export' + '()' in cell.source: return False
    if cell.directives_.get('eval:', [''])[0].lower() == 'false': return False
    trees = cell.parsed_()
    if not trees: return False
    if cell.directives_.keys() & {'export', 'exports', 'exporti', 'exec_doc'}: return True
    if all(isinstance(t, (ast.Import, ast.ImportFrom)) for t in trees): return True
    return len(nbdev.processors._show_docs(trees)) == len(trees)

def quarto() -> None:
    """nbdev_docs, with exec_show_docs running only `runs_for_docs` cells, and nbdev's links made to work on this site:
    a show_doc source link points at the site's copy of the file (`_repo/prism_nb/x.py.html#L12`, written by
    `repo_pages` once Quarto is done) instead of settings.ini's git_url, and a doc link is relative instead of
    absolute on doc_host (neither host exists)."""
    import nbdev.processors
    from nbdev.quarto import nbdev_docs
    sidebar()  # each notebook listed once
    nbdev.processors._do_eval = runs_for_docs  # exec_show_docs looks it up when it runs (in this process: n_workers=0)
    files, code, doc = set(), NbdevLookup.code, NbdevLookup.doc
    NbdevLookup.code = lambda self, sym: local_repo_urls(code(self, sym) or '', files) or None
    NbdevLookup.doc = lambda self, sym: (url[len(SITE_URL):] if (url := doc(self, sym)) and url.startswith(SITE_URL) else url)
    try: nbdev_docs.__wrapped__(n_workers=0)
    finally: NbdevLookup.code, NbdevLookup.doc = code, doc
    repo_pages(files)

# ---- loaded by Sphinx as a local extension
_re_anchor = re.compile(r'^<div id="([^"]+)"></div>\s*$')
def nbdev_anchors(app, doctree):
    """Each API entry's section takes nbdev's anchor (`budget_steps`, `arm.update`) as its id, which docutils would spell
    `budget-steps` (or `id3`); an earlier element holding that id (the prose section "ARM" before the class ARM) gives
    it up. Done as the page is read, so the page's table of contents and the search index link to the same ids."""
    from docutils import nodes
    order = list(doctree.findall(lambda n: isinstance(n, (nodes.raw, nodes.section))))
    for i, node in enumerate(order):
        m = isinstance(node, nodes.raw) and _re_anchor.match(node.astext())
        section = m and next((s for s in order[i + 1:] if isinstance(s, nodes.section)), None)
        if not section: continue
        anchor = m.group(1)
        other = doctree.ids.get(anchor)
        if other is not None and other is not section:
            n = 1
            while f'{anchor}-{n}' in doctree.ids: n += 1
            other['ids'][other['ids'].index(anchor)] = f'{anchor}-{n}'
            doctree.ids[f'{anchor}-{n}'] = other
        if anchor in section['ids']: section['ids'].remove(anchor)
        section['ids'].insert(0, anchor)
        doctree.ids[anchor] = section
        node.parent.remove(node)

def one_of_each_script(app, pagename, templatename, context, doctree):
    "Sphinx 7.4 lists a script added while reading twice (filename None, then ''): sphinx-thebe's `const` then fails."
    seen, scripts = set(), []
    for js in context.get('script_files', []):
        key = (js.filename or '', js.priority, tuple(sorted(js.attributes.items())))
        if key not in seen: seen.add(key); scripts.append(js)
    context['script_files'] = scripts

def setup(app):
    app.connect('doctree-read', nbdev_anchors, priority=100)  # before Sphinx's collectors (500) read the section ids
    app.connect('html-page-context', one_of_each_script)
    return {'parallel_read_safe': True, 'parallel_write_safe': True}

if __name__ == '__main__':
    a = ARGS
    if a.quarto: sys.exit(quarto())
    if a.keep:
        Path(a.keep).mkdir(parents=True, exist_ok=True)
        sys.exit(build(Path(a.keep)))
    with tempfile.TemporaryDirectory(prefix='prism-docs-') as d: sys.exit(build(Path(d)))
