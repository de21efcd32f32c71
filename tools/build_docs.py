"""Build the docs site in _docs/ from the notebooks (tools/build_docs.sh runs this; see there).

`nbdev_docs` is nbdev's notebook processing (`nbdev.serve.proc_nbs`) followed by `quarto render`. Both ways here
keep nbdev's processing: front matter from each notebook's title cell, `show_doc` for exported names (an
explicit `show_doc` cell replaces the automatic one), exported and `#| hide` cells dropped, backticked names
linked to their pages. Notebooks are not executed: as with `nbdev_docs`, only what `show_doc` needs runs,
i.e. exported cells, `show_doc` cells and import cells, with one difference: nbdev also runs a cell that
mixes imports with other code (its FAQ warns about them), and the notebooks' inline tests have such cells that
depend on earlier test cells, so they fail when run alone; here only cells made of imports alone run.

- `--quarto`: then `nbdev_docs` itself (Quarto's pages), in this process so that rule applies.
- otherwise (Quarto cannot be installed from the package registries this project reaches: every release of
  `quarto-cli` on PyPI is a source package whose build downloads Quarto's binary from GitHub): each processed
  notebook to one HTML page, named as Quarto names it (`00_core.ipynb` -> `core.html`), with the cell options
  Quarto honours (`#| echo: false`, `#| output: false`, `#| include: false`), images written beside the page
  (`paper_files/`), the sidebar from nbs/sidebar.yml, and no JavaScript. Math stays as TeX source.

Usage: python tools/build_docs.py [--quarto] [--force]"""
import ast, html, re, shutil, sys, base64, time
from pathlib import Path

import yaml
import nbdev.processors
from nbdev.config import get_config
from nbdev.doclinks import _nbpath2html
from nbdev.serve import proc_nbs
from execnb.nbio import read_nb
from nbconvert.filters.markdown_mistune import markdown2html_mistune
from pygments import highlight
from pygments.lexers import PythonLexer
from pygments.formatters import HtmlFormatter

cfg = get_config()
NBS, DOCS = cfg.nbs_path, cfg.doc_path
# nbdev links a backticked name to its page on the published site; the local site links to its own copy
SITE_URL = cfg.doc_host.rstrip('/') + '/' + cfg.doc_baseurl.strip('/') + '/'

def page_name(nb: Path) -> str: return _nbpath2html(Path(nb)).name

def _runs_for_docs(cell) -> bool:
    "Which cells nbdev's `exec_show_docs` runs: exported cells, `show_doc` cells, and cells of imports alone."
    if cell.cell_type != 'code' or nbdev.processors.cell_lang(cell) != 'python' or not cell.source: return False
    if 'nbdev_export' + '()' in cell.source: return False
    if cell.directives_.get('eval:', [''])[0].lower() == 'false': return False
    trees = cell.parsed_()
    if not trees: return False
    if cell.directives_.keys() & {'export', 'exports', 'exporti', 'exec_doc'}: return True
    if all(isinstance(t, (ast.Import, ast.ImportFrom)) for t in trees): return True
    return len(nbdev.processors._show_docs(trees)) == len(trees)

nbdev.processors._do_eval = _runs_for_docs  # exec_show_docs looks it up when it runs (in this process: n_workers=0)

# ---- cells
_re_opt = re.compile(r'^\s*#\|\s?(.*?)\s*$')
def cell_options(src: str):
    "Quarto/nbdev `#|` options at the top of a cell, and the source without them."
    lines, opts = src.splitlines(), {}
    while lines and _re_opt.match(lines[0]):
        k, _, v = _re_opt.match(lines.pop(0)).group(1).partition(':')
        opts[k.strip()] = v.strip().strip('"\'')
    return opts, '\n'.join(lines).strip('\n')

_re_ansi = re.compile(r'\x1b\[[0-9;]*[A-Za-z]')
def pre(text, cls='output'): return f'<pre class="{cls}">{html.escape(_re_ansi.sub("", text))}</pre>'
def src_text(x): return ''.join(x) if isinstance(x, list) else (x or '')

def slug(inner_html: str) -> str:
    "Pandoc's heading identifiers (what Quarto and nbdev's links use): lower case, spaces to hyphens."
    text = html.unescape(re.sub(r'<[^>]+>', '', inner_html)).strip().lower()
    text = re.sub(r'[^\w\s.-]', '', text)
    text = re.sub(r'\s+', '-', text)
    return re.sub(r'^[^a-z]+', '', text) or 'section'

_re_attr_link = re.compile(r'\[([^\]]+)\]\(([^)\s]+)\)\{[^}]*\}')
def markdown(md: str) -> str:
    "Markdown to HTML; a link with Pandoc attributes (show_doc's `[source](url){...}`) becomes a plain link at the right."
    md = _re_attr_link.sub(lambda m: f'<a class="source-link" href="{html.escape(m.group(2))}">{html.escape(m.group(1))}</a>', md)
    return markdown2html_mistune(md)

def inline_markdown(md: str) -> str: return re.sub(r'^<p>(.*)</p>\s*$', r'\1', markdown(md).strip(), flags=re.S)

class Page:
    def __init__(self, proc_nb: Path):
        self.nb, self.src = read_nb(proc_nb), proc_nb
        self.name = proc_nb.stem
        fm = {}
        if self.nb.cells and self.nb.cells[0].cell_type == 'raw':
            m = re.match(r'^---\s*\n(.*?)\n---', src_text(self.nb.cells[0].source).strip(), re.S)
            if m: fm = yaml.safe_load(m.group(1)) or {}
        self.title = fm.get('title', self.name)
        self.description = fm.get('description', '')
        self.file = fm.get('output-file', page_name(proc_nb))
        self.n_images = 0

    def image(self, data: str, ext: str, idx: int, j: int) -> str:
        rel = f'{Path(self.file).stem}_files/figure-html/cell-{idx}-output-{j}.{ext}'
        dest = DOCS / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        if ext == 'svg': dest.write_text(src_text(data))
        else: dest.write_bytes(base64.b64decode(src_text(data)))
        self.n_images += 1
        return f'<img src="{rel}" alt="figure">'

    def outputs(self, cell, idx: int) -> str:
        parts = []
        for j, o in enumerate(cell.get('outputs', [])):
            t = o.get('output_type')
            if t == 'stream': parts.append(pre(src_text(o.get('text')), f'output {o.get("name", "")}'))
            elif t == 'error': parts.append(pre('\n'.join(o.get('traceback', [])), 'output error'))
            elif t in ('display_data', 'execute_result'):
                d = o.get('data', {})
                if 'image/png' in d: parts.append(self.image(d['image/png'], 'png', idx, j))
                elif 'image/jpeg' in d: parts.append(self.image(d['image/jpeg'], 'jpg', idx, j))
                elif 'image/svg+xml' in d: parts.append(self.image(d['image/svg+xml'], 'svg', idx, j))
                elif 'text/html' in d: parts.append(src_text(d['text/html']))
                elif 'text/markdown' in d: parts.append(markdown(src_text(d['text/markdown'])))
                elif 'text/plain' in d: parts.append(pre(src_text(d['text/plain'])))
        return ''.join(f'<div class="cell-output">{p}</div>' for p in parts)

    def cell(self, cell, idx: int) -> str:
        if 'source' not in cell: return ''  # nbdev removed an exported or hidden cell
        opts, src = cell_options(src_text(cell.source))
        if opts.get('include') == 'false': return ''
        if cell.cell_type == 'markdown': return markdown(src) if src.strip() else ''
        if cell.cell_type != 'code': return ''
        out = []
        if src.strip() and opts.get('echo') != 'false':
            code = highlight(src, PythonLexer(), HtmlFormatter(cssclass='highlight'))
            if 'code-fold' in opts: code = f'<details><summary>{html.escape(opts.get("code-summary", "Code"))}</summary>{code}</details>'
            out.append(code)
        if opts.get('output') != 'false': out.append(self.outputs(cell, idx))
        body = ''.join(out)
        return f'<div class="cell">{body}</div>' if body else ''

    def body(self) -> str:
        body = '\n'.join(self.cell(c, i) for i, c in enumerate(self.nb.cells[1:] if self.nb.cells and self.nb.cells[0].cell_type == 'raw' else self.nb.cells))
        return self.links(self.resources(self.headings(body)))

    def headings(self, body: str) -> str:
        "Pandoc-style ids on headings (what nbdev's links point at), and the page's table of contents."
        self.toc, seen = [], set()
        def fix(m):
            level, inner = m.group(1), re.sub(r'<a class="anchor-link"[^>]*>.*?</a>', '', m.group(3))
            i = base = slug(inner); n = 1
            while i in seen: i, n = f'{base}-{n}', n + 1
            seen.add(i)
            if level in '23': self.toc.append((int(level), i, re.sub(r'<[^>]+>', '', inner)))
            return f'<h{level} id="{i}">{inner}<a class="anchor" href="#{i}">#</a></h{level}>'
        return re.sub(r'<h([1-6])((?:\s[^>]*)?)>(.*?)</h\1>', fix, body, flags=re.S)

    def resources(self, body: str) -> str:
        "Local files a markdown cell shows (`![..](../figures/x.png)`) are copied into the site, as Quarto does."
        def fix(m):
            src = html.unescape(m.group(2))
            if re.match(r'^([a-z]+:|/|#)', src) or src.startswith(f'{Path(self.file).stem}_files/'): return m.group(0)
            f = (NBS / src).resolve()
            root = cfg.config_path.resolve()
            if not f.is_file() or root not in f.parents: return m.group(0)  # left broken: tools/check_docs.py says so
            rel = Path('resources') / f.relative_to(root)
            (DOCS / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, DOCS / rel)
            return f'{m.group(1)}"{html.escape(rel.as_posix(), quote=True)}"'
        return re.sub(r'(<img\b[^>]*?\ssrc=)"([^"]*)"', fix, body)

    def links(self, body: str) -> str:
        "Links to the published site and to notebooks become links within this site."
        def fix(m):
            url = html.unescape(m.group(2))
            if url.startswith(SITE_URL): url = url[len(SITE_URL):]
            elif not re.match(r'^[a-z]+:', url):
                path, hash_, frag = url.partition('#')
                if path.endswith('.ipynb'): url = page_name(Path(path)) + hash_ + frag
            return f'{m.group(1)}"{html.escape(url, quote=True)}"'
        return re.sub(r'(\shref=)"([^"]*)"', fix, body)

# ---- the site
def sidebar_files():
    "The notebooks in nbs/sidebar.yml, as (section or None, notebook name); every notebook must be listed once."
    side = yaml.safe_load((NBS / 'sidebar.yml').read_text())['website']['sidebar']['contents']
    res = []
    def walk(items, section):
        for it in items:
            if isinstance(it, str): res.append((section, it))
            else: walk(it.get('contents', []), it.get('section'))
    walk(side, None)
    names = [n for _, n in res]
    on_disk = sorted(p.name for p in NBS.glob('*.ipynb'))
    missing, extra = set(on_disk) - set(names), set(names) - set(on_disk)
    dups = {n for n in names if names.count(n) > 1}
    if missing or extra or dups:
        sys.exit(f'nbs/sidebar.yml does not list each notebook once: missing {sorted(missing)}, '
                 f'not in nbs/ {sorted(extra)}, twice {sorted(dups)}')
    return res

CSS = """
:root { --fg: #1d2733; --muted: #5b6673; --line: #e3e7ec; --accent: #2261a8; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); }
header { background: var(--accent); padding: .6rem 1.2rem; }
header a { color: #fff; font-weight: 600; text-decoration: none; font-size: 1.1rem; }
.layout { display: grid; grid-template-columns: 15rem minmax(0, 1fr) 13rem; gap: 2rem; max-width: 90rem; margin: 0 auto; padding: 1rem; }
nav.sidebar, nav.toc { font-size: .9rem; position: sticky; top: 1rem; align-self: start; max-height: 95vh; overflow-y: auto; }
nav ul { list-style: none; padding-left: .6rem; margin: .2rem 0 .8rem; }
nav .section { font-weight: 600; color: var(--muted); margin-top: .6rem; }
nav a { color: var(--fg); text-decoration: none; } nav a:hover { color: var(--accent); }
nav a.current { color: var(--accent); font-weight: 600; }
nav.toc .l3 { padding-left: .8rem; }
main { min-width: 0; }
h1.title { margin-bottom: .2rem; } p.description { color: var(--muted); font-size: 1.15rem; margin-top: 0; }
a { color: var(--accent); } a.anchor { margin-left: .4rem; opacity: 0; text-decoration: none; }
h1:hover a.anchor, h2:hover a.anchor, h3:hover a.anchor, h4:hover a.anchor { opacity: .5; }
.cell { margin: .8rem 0; }
.highlight { background: #f6f8fa; border: 1px solid var(--line); border-radius: 4px; overflow-x: auto; }
.highlight pre { margin: 0; padding: .6rem .8rem; }
pre { font-size: .85rem; }
pre.output { margin: .3rem 0 0 .8rem; padding-left: .6rem; border-left: 3px solid var(--line); white-space: pre-wrap; }
pre.error { color: #a11; }
.cell-output img { max-width: 100%; height: auto; }
.cell-output { overflow-x: auto; }
table { border-collapse: collapse; margin: .6rem 0; font-size: .9rem; }
th, td { border-bottom: 1px solid var(--line); padding: .25rem .6rem; text-align: left; }
.dataframe td { text-align: right; }
a.source-link { float: right; font-size: .85rem; }
blockquote { margin: .5rem 0; padding-left: .8rem; border-left: 3px solid var(--line); color: var(--muted); }
details > summary { cursor: pointer; color: var(--muted); font-size: .9rem; }
code { font-size: .9em; }
@media (max-width: 60rem) { .layout { grid-template-columns: 1fr; } nav.toc { display: none; } nav.sidebar { position: static; } }
"""

def nav_html(entries, pages, current):
    out, section = ['<nav class="sidebar"><ul>'], None
    for sec, nb in entries:
        if sec != section:
            if section is not None: out.append('</ul></li>')
            if sec is not None: out.append(f'<li class="section">{html.escape(sec)}<ul>')
            section = sec
        p = pages[nb]
        cls = ' class="current"' if p is current else ''
        out.append(f'<li><a href="{p.file}"{cls}>{html.escape(str(p.title))}</a></li>')
    if section is not None: out.append('</ul></li>')
    return ''.join(out) + '</ul></nav>'

def toc_html(page):
    if not page.toc: return '<nav class="toc"></nav>'
    items = ''.join(f'<li class="l{l}"><a href="#{i}">{html.escape(html.unescape(t))}</a></li>' for l, i, t in page.toc)
    return f'<nav class="toc"><div class="section">On this page</div><ul>{items}</ul></nav>'

def render_page(page, entries, pages):
    body = page.body()
    desc = f'<p class="description">{inline_markdown(str(page.description))}</p>' if page.description else ''
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(str(page.title))} – {html.escape(cfg.title)}</title>
<link rel="icon" href="data:,"><link rel="stylesheet" href="site.css"></head>
<body><header><a href="index.html">{html.escape(cfg.title)}</a></header>
<div class="layout">{nav_html(entries, pages, page)}
<main><h1 class="title">{html.escape(str(page.title))}</h1>{desc}
{body}
</main>{toc_html(page)}</div></body></html>
"""

def main(force=False, quarto=False):
    t0 = time.time()
    entries = sidebar_files()
    if quarto:
        from nbdev.quarto import nbdev_docs
        return nbdev_docs.__wrapped__(n_workers=0)
    cache = proc_nbs(NBS, n_workers=0, force=force)
    t1 = time.time()
    shutil.rmtree(DOCS, ignore_errors=True)
    DOCS.mkdir(parents=True)
    pages = {nb: Page(cache / nb) for _, nb in entries}
    for p in pages.values():
        (DOCS / p.file).write_text(render_page(p, entries, pages))
    (DOCS / 'site.css').write_text(CSS + HtmlFormatter(cssclass='highlight').get_style_defs('.highlight'))
    (DOCS / '.nojekyll').touch()
    n_img = sum(p.n_images for p in pages.values())
    print(f'{DOCS.relative_to(cfg.config_path)}/: {len(pages)} pages, {n_img} images '
          f'(nbdev processing {t1 - t0:.0f} s, pages {time.time() - t1:.1f} s)')

if __name__ == '__main__':
    main(force='--force' in sys.argv, quarto='--quarto' in sys.argv)
