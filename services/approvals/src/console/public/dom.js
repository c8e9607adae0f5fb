/* global document, Node */
// Building the page from data. Every value from the server (summaries, arguments, reasons, ids) becomes a text node,
// never markup: nothing here parses HTML, so an argument such as `<img src=x onerror=alert(1)>` is shown as the text
// it is. (The Content-Security-Policy the page is served with would refuse an inline script anyway.)

const SVG_NS = 'http://www.w3.org/2000/svg';

/**
 * `h('p', { class: 'x', onclick: f }, 'text', child)`: an element with attributes (`on*` become listeners; `false`,
 * null and undefined are left out) and children (strings become text nodes; arrays are flattened; null is skipped).
 */
export function h(tag, attrs = {}, ...children) {
  return build(document.createElement(tag), attrs, children);
}

/** The same for SVG elements. */
export function s(tag, attrs = {}, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attrs, children);
}

function build(el, attrs, children) {
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === false || value === null || value === undefined) continue;
    if (name.startsWith('on') && typeof value === 'function') el.addEventListener(name.slice(2), value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Replaces an element's children. */
export function fill(el, ...children) {
  el.replaceChildren();
  return build(el, {}, children);
}

/** `in 4:05`, `in 1 h 02 min`, or `expired 0:12 ago`, for a countdown to `until` from `now` (milliseconds). */
export function countdown(until, now) {
  const ms = until - now;
  const t = Math.floor(Math.abs(ms) / 1000);
  const hours = Math.floor(t / 3600);
  const minutes = Math.floor((t % 3600) / 60);
  const seconds = t % 60;
  const text =
    hours > 0 ? `${hours} h ${String(minutes).padStart(2, '0')} min` : `${minutes}:${String(seconds).padStart(2, '0')}`;
  return ms > 0 ? `in ${text}` : `${text} ago`;
}

/** `350 ms`, `4.2 s`, `3 min 05 s`, `2 h 10 min`: a duration in milliseconds, for people. */
export function duration(ms) {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes} min ${String(Math.floor((ms % 60_000) / 1000)).padStart(2, '0')} s`;
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} min`;
}

/** A local date and time with seconds, for an RFC 3339 string. */
export function when(iso) {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso) : d.toLocaleString(undefined, { hour12: false });
}

/** `requested` for `ormuz.toolcall.requested.v1`. */
export function eventName(type) {
  return String(type)
    .replace(/^ormuz\.toolcall\./, '')
    .replace(/\.v\d+$/, '');
}

/** `policy` for `/ormuz/policy`: the service (or other source) that recorded an event. */
export function sourceName(source) {
  return String(source).replace(/^\/ormuz\//, '') || String(source);
}
