// The accessibility checks a page can make of itself, run by tests/resolver/web/test_browser.py
// through browser_support.audit: a list of what is wrong (WCAG 2.1 success criteria in
// brackets), empty when nothing is.
const problems = [];
const say = (text) => problems.push(text);
if (!document.documentElement.lang) say('no lang attribute [3.1.1]');
const h1s = document.querySelectorAll('h1');
if (h1s.length !== 1) say(`${h1s.length} h1 elements`);
let level = 0;
for (const h of document.querySelectorAll('h1, h2, h3, h4, h5, h6')) {
  const n = Number(h.tagName[1]);
  if (n > level + 1) say(`${h.tagName} "${h.textContent.trim()}" follows h${level} [1.3.1]`);
  level = n;
}
for (const tag of ['header', 'main', 'footer']) {
  if (document.getElementsByTagName(tag).length !== 1) say(`not one <${tag}> landmark [1.3.1]`);
}
// Navigation: at least one; more (the main menu, the language switcher) each with a name of
// its own, so that a screen reader's list of landmarks tells them apart (ARIA 1.2 landmarks).
const navs = [...document.getElementsByTagName('nav')];
if (navs.length === 0) say('no <nav> landmark [1.3.1]');
const navNames = navs.map((nav) => (nav.getAttribute('aria-label') || '').trim());
if (navs.length > 1 && (navNames.includes('') || new Set(navNames).size !== navs.length))
  say('<nav> landmarks without names of their own [1.3.1, 2.4.1]');
// Each part in another language than the page's says so (lang), as a well-formed tag.
for (const part of document.querySelectorAll('[lang]')) {
  if (!/^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$/.test(part.lang)) say(`lang="${part.lang}" is no language tag [3.1.2]`);
}
for (const input of document.querySelectorAll('input, select, textarea')) {
  if (input.type === 'hidden') continue;
  const label = input.id && document.querySelector(`label[for="${input.id}"]`);
  if (!(label && label.textContent.trim()) && !input.getAttribute('aria-label'))
    say(`unlabelled ${input.outerHTML} [1.3.1, 4.1.2]`);
}
for (const img of document.querySelectorAll('img')) if (!img.hasAttribute('alt')) say('img without alt [1.1.1]');
for (const control of document.querySelectorAll('a, button')) {
  if (!control.textContent.trim() && !control.getAttribute('aria-label')) say('a link or button without a name [2.4.4]');
}
for (const table of document.querySelectorAll('table')) {
  if (!table.caption || !table.caption.textContent.trim()) say('table without caption [1.3.1]');
  for (const th of table.querySelectorAll('th')) if (!th.scope) say(`th "${th.textContent}" without scope [1.3.1]`);
}
const ids = [...document.querySelectorAll('[id]')].map((e) => e.id);
if (new Set(ids).size !== ids.length) say('duplicate ids [4.1.1]');
const first = document.querySelector('a[href], button, input, select, textarea');
const target = first && first.getAttribute('href') && first.getAttribute('href').startsWith('#')
  && document.getElementById(first.getAttribute('href').slice(1));
if (!target) say('the first link is not a working skip link [2.4.1]');
const luminance = (rgb) => {
  const [r, g, b] = rgb.map((c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
};
const channels = (color) => color.match(/[\d.]+/g).map(Number);
const background = (element) => {
  for (let e = element; e; e = e.parentElement) {
    const c = channels(getComputedStyle(e).backgroundColor);
    if (c.length < 4 || c[3] > 0) return c.slice(0, 3);
  }
  return [255, 255, 255];
};
for (const element of document.body.querySelectorAll('*')) {
  const text = [...element.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
  if (!text) continue;
  const style = getComputedStyle(element);
  const [fg, bg] = [luminance(channels(style.color).slice(0, 3)), luminance(background(element))];
  const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
  const large = parseFloat(style.fontSize) >= 24 || (parseFloat(style.fontSize) >= 18.66 && Number(style.fontWeight) >= 700);
  if (ratio < (large ? 3 : 4.5)) say(`contrast ${ratio.toFixed(2)} of "${element.textContent.trim().slice(0, 30)}" [1.4.3]`);
}
return problems;
