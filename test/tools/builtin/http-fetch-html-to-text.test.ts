import { describe, expect, it } from 'vitest';
import { decodeEntities, htmlToText } from '../../../src/tools/builtin/http-fetch/html-to-text.js';

describe('htmlToText', () => {
  it('drops script, style, noscript, template and svg content, and comments', () => {
    expect(
      htmlToText(
        '<p>a</p><script type="module">const x = "</p>"; if (a < b) {}</script><STYLE>p{}</STYLE>' +
          '<noscript>enable JS</noscript><template><p>t</p></template><svg><text>s</text></svg>' +
          '<!-- <p>comment</p> --><p>b</p>',
      ),
    ).toBe('a\n\nb');
  });

  it('keeps one line per block, a blank line between paragraphs, and joins inline elements', () => {
    expect(
      htmlToText(
        '<div>\n  <div>one <em>two</em><strong>three</strong></div>\n  <div>four</div>\n</div>' +
          '<p>five<br>six</p><p>seven</p><table><tr><td>a</td><td>b</td></tr><tr><td>c</td></tr></table>',
      ),
    ).toBe('one twothree\nfour\n\nfive\nsix\n\nseven\n\na b\nc');
  });

  it('marks headings with # and list items with -', () => {
    expect(htmlToText('<h2>Install</h2><ol><li>Download</li><li> Run </li></ol><h3>Notes</h3>')).toBe(
      '## Install\n\n- Download\n- Run\n\n### Notes',
    );
  });

  it('keeps the whitespace inside pre and drops the newline that opens it', () => {
    expect(htmlToText('<p>Run:</p><pre>\n  npm   test\n\n\tdone</pre><p>end</p>')).toBe(
      'Run:\n\n  npm   test\n\n done\n\nend',
    );
  });

  it('collapses whitespace and decodes entities only in text, never as markup', () => {
    expect(htmlToText('<p>  a \n\t b &lt;p&gt;not a tag&lt;/p&gt;   &amp;amp; </p>')).toBe(
      'a b <p>not a tag</p> &amp;',
    );
  });

  it('reads a > inside a quoted attribute as part of the tag, and a lone < as text', () => {
    expect(htmlToText('<a title="x > y" data-z=\'>\'>link</a> 1 < 2 <3 <-')).toBe('link 1 < 2 <3 <-');
  });

  it('ends an unclosed tag, comment or script at the end of the document', () => {
    expect(htmlToText('before<p class="x')).toBe('before');
    expect(htmlToText('before<!-- never closed <p>x</p>')).toBe('before');
    expect(htmlToText('before<script>never closed')).toBe('before');
  });

  it('stays linear on hostile input', () => {
    const started = process.hrtime.bigint();
    htmlToText(
      '<td></td>'.repeat(100_000) + ' '.repeat(500_000) + '<a '.repeat(100_000) + '<'.repeat(500_000),
    );
    const milliseconds = Number(process.hrtime.bigint() - started) / 1e6;
    expect(milliseconds).toBeLessThan(2_000);
  });
});

describe('decodeEntities', () => {
  it('decodes common named, decimal and hexadecimal entities', () => {
    expect(
      decodeEntities('&amp;&lt;&gt;&quot;&apos;&nbsp;&copy;&hellip;&mdash;&euro;&#65;&#x42;&#X1F600;'),
    ).toBe('&<>"\' ©…—€AB😀');
  });

  it('leaves unknown names and text without a semicolon as they are, and replaces invalid or out-of-range code points', () => {
    expect(decodeEntities('&unknown; &amp &#0; &#xD800; &#x110000; &#9999999;')).toBe(
      '&unknown; &amp \uFFFD \uFFFD \uFFFD \uFFFD',
    );
  });
});
