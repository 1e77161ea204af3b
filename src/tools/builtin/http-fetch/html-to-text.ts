/** Elements whose content is never text for a reader: skipped to their closing tag. */
const SKIPPED = new Set(['script', 'style', 'noscript', 'template', 'svg', 'iframe']);

/** Elements that start and end a line of their own. */
const BLOCKS = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'body',
  'caption',
  'dd',
  'details',
  'dialog',
  'div',
  'dl',
  'dt',
  'fieldset',
  'figcaption',
  'figure',
  'footer',
  'form',
  'header',
  'hr',
  'html',
  'main',
  'nav',
  'ol',
  'option',
  'p',
  'pre',
  'section',
  'summary',
  'table',
  'tbody',
  'tfoot',
  'thead',
  'title',
  'tr',
  'ul',
]);

const ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  shy: '',
  copy: '©',
  reg: '®',
  trade: '™',
  hellip: '…',
  mdash: '—',
  ndash: '–',
  lsquo: '‘',
  rsquo: '’',
  sbquo: '‚',
  ldquo: '“',
  rdquo: '”',
  bdquo: '„',
  laquo: '«',
  raquo: '»',
  bull: '•',
  middot: '·',
  deg: '°',
  times: '×',
  divide: '÷',
  plusmn: '±',
  micro: 'µ',
  para: '¶',
  sect: '§',
  euro: '€',
  pound: '£',
  yen: '¥',
  cent: '¢',
  larr: '←',
  rarr: '→',
  uarr: '↑',
  darr: '↓',
  harr: '↔',
  le: '≤',
  ge: '≥',
  ne: '≠',
  minus: '−',
  zwj: '',
  zwnj: '',
  ensp: ' ',
  emsp: ' ',
  thinsp: ' ',
};

// Private-use stand-ins that carry <pre> whitespace through the whitespace clean-up at the end.
const PRE_NEWLINE = '\uE000';
const PRE_SPACE = '\uE001';
/** Stands for a paragraph break until the clean-up: one blank line, however many meet. */
const PARAGRAPH = '\uE002';

/** Elements set off by a blank line. */
const PARAGRAPHS = new Set(['p', 'hr', 'blockquote', 'table', 'pre', 'ul', 'ol', 'dl', 'figure']);

/**
 * The readable text of an HTML document: script, style and similar elements dropped, tags removed,
 * common entities decoded, whitespace collapsed except inside `<pre>`, one line per block, headings
 * marked with `#` and list items with `-`. A linear scan, not a parser: it reads real pages well
 * enough for a model and cannot be made to backtrack on hostile input.
 */
export function htmlToText(html: string): string {
  const parts: string[] = [];
  let preDepth = 0;
  let index = 0;
  while (index < html.length) {
    const open = html.indexOf('<', index);
    const text = html.slice(index, open === -1 ? html.length : open);
    if (text !== '') parts.push(preDepth > 0 ? protectPre(decodeEntities(text)) : collapse(text));
    if (open === -1) break;
    if (html.startsWith('<!--', open)) {
      const end = html.indexOf('-->', open + 4);
      index = end === -1 ? html.length : end + 3;
      continue;
    }
    const tag = readTag(html, open);
    if (tag === undefined) {
      parts.push('<');
      index = open + 1;
      continue;
    }
    index = tag.end;
    if (tag.name === '') continue;
    if (!tag.closing && !tag.selfClosing && SKIPPED.has(tag.name)) {
      index = skipTo(html, tag.name, index);
      continue;
    }
    parts.push(separator(tag.name, tag.closing));
    if (tag.name === 'pre') {
      preDepth = Math.max(0, preDepth + (tag.closing ? -1 : 1));
      // As in a browser, a newline right after <pre> is not part of the text.
      if (!tag.closing) index += html.startsWith('\r\n', index) ? 2 : html[index] === '\n' ? 1 : 0;
    }
  }
  return tidy(parts.join(''));
}

/** Decodes `&name;`, `&#123;` and `&#x1F600;`; unknown names stay as they are. */
export function decodeEntities(text: string): string {
  return text.replace(
    /&(#[xX][0-9a-fA-F]{1,6}|#\d{1,7}|[a-zA-Z][a-zA-Z0-9]{1,31});/g,
    (whole, body: string) => {
      if (body.startsWith('#')) {
        const code =
          body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
        const valid = code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff);
        return valid ? String.fromCodePoint(code) : '\uFFFD';
      }
      return ENTITIES[body] ?? ENTITIES[body.toLowerCase()] ?? whole;
    },
  );
}

interface Tag {
  /** Lower-case element name; empty for `<!doctype>`, `<![CDATA[` and `<?…?>`, which are dropped. */
  name: string;
  closing: boolean;
  selfClosing: boolean;
  /** Index just past the tag's `>`. */
  end: number;
}

/** The tag starting at `html[start] === '<'`, or undefined when that `<` is just text. */
function readTag(html: string, start: number): Tag | undefined {
  let index = start + 1;
  const first = html[index];
  if (first === '!' || first === '?') {
    const end = html.indexOf('>', index);
    return { name: '', closing: false, selfClosing: true, end: end === -1 ? html.length : end + 1 };
  }
  const closing = first === '/';
  if (closing) index += 1;
  const nameMatch = /^[a-zA-Z][a-zA-Z0-9:-]*/.exec(html.slice(index, index + 64));
  if (nameMatch === null) return undefined;
  index += nameMatch[0].length;
  // Quotes only delimit an attribute value after '=': a '>' inside one does not end the tag.
  while (index < html.length && html[index] !== '>') {
    if (html[index] === '=') {
      index += 1;
      while (html[index] === ' ' || html[index] === '\t' || html[index] === '\n' || html[index] === '\r')
        index += 1;
      const quote = html[index];
      if (quote === '"' || quote === "'") {
        const close = html.indexOf(quote, index + 1);
        index = close === -1 ? html.length : close + 1;
        continue;
      }
    }
    index += 1;
  }
  return {
    name: nameMatch[0].toLowerCase(),
    closing,
    selfClosing: html[index - 1] === '/',
    end: Math.min(index + 1, html.length),
  };
}

/** Index just past the closing tag of a skipped element, or the end if it is never closed. */
function skipTo(html: string, name: string, from: number): number {
  const pattern = new RegExp(`</${name}[\\s/>]`, 'gi');
  pattern.lastIndex = from;
  const match = pattern.exec(html);
  if (match === null) return html.length;
  const end = html.indexOf('>', match.index);
  return end === -1 ? html.length : end + 1;
}

function separator(name: string, closing: boolean): string {
  if (name === 'br') return '\n';
  if (name === 'li') return closing ? '' : '\n- ';
  if (name === 'td' || name === 'th') return ' ';
  const heading = /^h([1-6])$/.exec(name);
  if (heading) return closing ? PARAGRAPH : `${PARAGRAPH}${'#'.repeat(Number(heading[1]))} `;
  if (PARAGRAPHS.has(name)) return PARAGRAPH;
  return BLOCKS.has(name) ? '\n' : '';
}

function collapse(text: string): string {
  return decodeEntities(text.replace(/[ \t\n\r\f]+/g, ' '));
}

function protectPre(text: string): string {
  return text.replace(/\r\n?|\n/g, PRE_NEWLINE).replace(/[ \t]/g, PRE_SPACE);
}

/**
 * Turns each run of whitespace that holds a break into one line break, or a blank line when a
 * paragraph break is among it (whitespace between two blocks must not add blank lines), then
 * restores `<pre>` whitespace.
 */
function tidy(text: string): string {
  // Spaces first: with no two in a row left, the break pattern cannot backtrack over long runs.
  return text
    .replace(/ {2,}/g, ' ')
    .replace(/ ?[\n\uE002][ \n\uE002]*/g, (run) => (run.includes(PARAGRAPH) ? '\n\n' : '\n'))
    .trim()
    .replaceAll(PRE_NEWLINE, '\n')
    .replaceAll(PRE_SPACE, ' ');
}
