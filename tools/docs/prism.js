// Click to enlarge (tools/build_docs.py copies this into the book's _static/; Jupyter Book adds it to every page):
// a figure of the article shown narrower than its natural size gets class prism-zoomable and, on click, opens at
// its natural size in an overlay that scrolls; a click or Esc closes it. tools/check_docs.py checks the class.
// Also: table cells that are numbers are kept on one line (class prism-number, prism.css).
(function () {
  function zoomable(img) {
    var shown = img.getBoundingClientRect().width;
    img.classList.toggle('prism-zoomable', shown > 0 && img.naturalWidth > shown + 1);
    if (img.classList.contains('prism-zoomable')) img.title = img.title || 'click to enlarge';
  }
  function open(img) {
    var overlay = document.createElement('div'), big = new Image();
    overlay.className = 'prism-zoom';
    overlay.setAttribute('role', 'dialog');
    overlay.setAttribute('aria-label', (img.alt || 'figure') + ' at full size (click or Esc to close)');
    big.src = img.currentSrc || img.src;
    big.alt = img.alt;
    overlay.appendChild(big);
    function close() { overlay.remove(); document.removeEventListener('keydown', esc); }
    function esc(e) { if (e.key === 'Escape') close(); }
    overlay.addEventListener('click', close);
    document.addEventListener('keydown', esc);
    document.body.appendChild(overlay);
  }
  // a table cell that is a number (digits and the signs numbers come with, 3 other characters at most, as
  // tools/check_docs.py reads it) never wraps: the table scrolls in its own box instead (prism.css)
  function numbers() {
    Array.prototype.forEach.call(document.querySelectorAll('.bd-article td'), function (td) {
      var t = td.textContent.trim();
      if (/\d/.test(t) && (t.match(/[^\d\s.,:;±+\-−–—%()\[\]\/×*<>=≈~^]/g) || []).length <= 3) td.classList.add('prism-number');
    });
  }
  function init() {
    numbers();
    var imgs = Array.prototype.slice.call(document.querySelectorAll('.bd-article img'));
    imgs.forEach(function (img) {
      if (img.complete) zoomable(img); else img.addEventListener('load', function () { zoomable(img); });
      img.addEventListener('click', function () { if (img.classList.contains('prism-zoomable')) open(img); });
    });
    window.addEventListener('resize', function () { imgs.forEach(zoomable); });
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init); else init();
})();
