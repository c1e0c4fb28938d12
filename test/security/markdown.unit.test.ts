// Tenant text in the operators' console: the Temporal Web UI renders an operation's summary
// and details as markdown, and a key, a description or a recipient is the tenant's to
// choose. Rendered by a real CommonMark + GFM parser (marked), escaped text says exactly
// what it holds and never becomes a link, an image, emphasis or HTML; a code span holds any
// key whole, backticks included; identifiers are shown as they are.
import fc from 'fast-check';
import { marked } from 'marked';
import { describe, expect, it } from 'vitest';
import { staticDetails, staticSummary } from '../../client/api/requests.js';
import { markdownCode, markdownText } from '../../workflows/markdown.js';
import { builtInCatalog } from '../../workflows/catalog.js';

/** A definition version, as every operation's details end with it. */
const VERSION = '0123456789abcdef';
import { fulfilment } from '../../examples/shipping/operations.js';

const html = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
const render = (markdown: string) => marked.parse(markdown, { gfm: true, async: false });
/** The tags a rendering holds, besides the paragraphs around it. */
const tagsOf = (rendered: string) => [...rendered.matchAll(/<([a-z0-9]+)[\s>]/g)].map((m) => m[1]).filter((t) => t !== 'p');

const HOSTILE = [
  '[click here](https://evil.example/login)',
  '![x](https://evil.example/pixel.png)',
  '<img src=x onerror=alert(1)> <script>alert(1)</script>',
  'www.evil.example and https://evil.example and mailto:a@evil.example and a@evil.example',
  '**bold** _em_ ~~gone~~ `code` ``double``',
  '# heading',
  '- a list',
  '> a quote',
  '| a | table |',
  '&copy; &#65; &amp;',
  'a\\` back\\\\slash',
  '[ref]: https://evil.example',
];

describe('markdownText', () => {
  it.each(HOSTILE)('renders %j as exactly that text, with no markup', (text) => {
    const rendered = render(markdownText(text));
    expect(tagsOf(rendered)).toEqual([]);
    expect(rendered.trim()).toBe(`<p>${html(text)}</p>`);
  });

  it('renders any text as itself, and never as a tag', () => {
    fc.assert(
      fc.property(
        fc.string({
          unit: fc.oneof(
            fc.constantFrom(...'[]()<>!*_`~#&\\:./@|-+=\'" \ta1'),
            fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }),
          ),
          maxLength: 40,
        }),
        (text) => {
          const rendered = marked.parseInline(markdownText(text), { gfm: true, async: false });
          expect(rendered).toBe(html(text));
        },
      ),
      { numRuns: 3000 },
    );
  });
});

describe('markdownCode', () => {
  it('holds any text, backticks and spaces included, in one code span', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom('`', ' ', 'a', '[', ']', '(', ')', '*', '<'), minLength: 1, maxLength: 20 }),
        (text) => {
          // A code span of spaces only is the one thing CommonMark shows as it is, padding included.
          fc.pre(text.trim() !== '');
          const rendered = marked.parseInline(markdownCode(text), { gfm: true, async: false });
          expect(rendered).toBe(`<code>${html(text)}</code>`);
        },
      ),
      { numRuns: 3000 },
    );
  });
});

describe("an operation's summary and details in the Web UI", () => {
  const payment = builtInCatalog.get('payment')!;
  const checkout = builtInCatalog.get('checkout')!;

  it('keep a hostile key and description inert, and show both in full', () => {
    const key = 'x`](https://evil.example) [click](https://evil.example)';
    const description = 'refund at [our site](https://evil.example) <b>now</b> www.evil.example';
    const request = { account: 'acc_alice', amount: 4200, currency: 'EUR', description };
    const summary = render(staticSummary(payment, `acme/${key}`, request));
    expect(tagsOf(summary)).toEqual(['code']);
    expect(summary).toContain(`<code>${html(`acme/${key}`)}</code>`);
    const details = render(staticDetails(payment, request, VERSION));
    // The account and the definition's version, each in its code span; nothing else is markup.
    expect(tagsOf(details)).toEqual(['code', 'code']);
    expect(details).toContain('<code>acc_alice</code>');
    expect(details).toContain(html(description));
  });

  it('show identifiers as they are, in code spans', () => {
    const request = { account: 'acc_a.b:c-d', amount: 1, currency: 'EUR', items: [{ sku: 'sku_book', quantity: 2 }] };
    expect(staticDetails(checkout, request, VERSION)).toBe(
      'account `acc_a.b:c-d`\n\n2 × `sku_book`\n\ndefinition `0123456789abcdef`',
    );
  });

  it("escape an outside definition's free text too (the shipping example's recipient)", () => {
    const request = {
      account: 'acc_alice',
      amount: 1,
      currency: 'EUR',
      recipient: '[Ann](https://evil.example)',
      country: 'FR',
      postcode: '75001',
    };
    const details = render(staticDetails(fulfilment, request, VERSION));
    expect(tagsOf(details)).toEqual(['code', 'code']);
    expect(details).toContain(html('[Ann](https://evil.example), 75001 FR'));
  });

  it('without a details function of the definition, show each field in a code span', () => {
    const { details: _none, ...plain } = payment;
    const rendered = render(
      staticDetails(plain, { account: 'acc_alice', amount: 5, currency: 'EUR', description: 'a`b [x](y)' }, VERSION),
    );
    expect(tagsOf(rendered)).toEqual(['code', 'code', 'code', 'code', 'code']);
    expect(rendered).toContain(`<code>${html('a`b [x](y)')}</code>`);
  });
});
