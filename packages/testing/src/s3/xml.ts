/**
 * Just enough XML for S3: a builder for response documents and a small, strict parser for the two
 * request bodies this server reads (DeleteObjects and CreateBucket). Anything a real XML parser would
 * reject throws {@link XmlSyntaxError}; DOCTYPEs are refused outright so no entity expansion can occur.
 */

const S3_NAMESPACE = 'http://s3.amazonaws.com/doc/2006-03-01/';

export class XmlSyntaxError extends Error {
  constructor(message: string, position: number) {
    super(`${message} at offset ${position}`);
    this.name = 'XmlSyntaxError';
  }
}

// Characters XML 1.0 cannot carry literally (and '\r', which parsers would normalise away) go out as
// numeric references so a key like "a\rb" survives the round trip through a listing.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const NEEDS_ESCAPE = /[&<>"'\u0000-\u0008\u000B\u000C\u000D\u000E-\u001F\uFFFE\uFFFF]/g;

function escapeXml(text: string): string {
  return text.replace(NEEDS_ESCAPE, (ch) => {
    switch (ch) {
      case '&':
        return '&amp;';
      case '<':
        return '&lt;';
      case '>':
        return '&gt;';
      case '"':
        return '&quot;';
      case "'":
        return '&apos;';
      default:
        return `&#x${ch.charCodeAt(0).toString(16).toUpperCase()};`;
    }
  });
}

export type XmlContent = string | number | boolean | readonly string[];

/** `<name>content</name>`; string content is escaped, an array is taken as already-built children. */
export function xmlElement(
  name: string,
  content: XmlContent,
  attributes: Record<string, string> = {},
): string {
  const attrs = Object.entries(attributes)
    .map(([k, v]) => ` ${k}="${escapeXml(v)}"`)
    .join('');
  const inner = Array.isArray(content) ? content.join('') : escapeXml(String(content));
  return `<${name}${attrs}>${inner}</${name}>`;
}

/** A root element in the S3 namespace, as S3's own response documents are. */
export function xmlRoot(name: string, children: readonly string[]): string {
  return xmlElement(name, children, { xmlns: S3_NAMESPACE });
}

export function xmlDocument(root: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n${root}`;
}

export interface XmlNode {
  /** The qualified name as written (`s3:Key`). */
  readonly name: string;
  /** The name without any namespace prefix (`Key`). */
  readonly local: string;
  readonly children: XmlNode[];
  /** All character data directly inside this element, entities decoded. */
  text: string;
}

const NAME_START = /[A-Za-z_:\u00C0-\uFFFF]/;
const NAME_CHAR = /[A-Za-z0-9_:.\-\u00B7\u00C0-\uFFFF]/;
const MAX_DEPTH = 64;

/** Parses a complete document and returns its root element. */
export function parseXml(source: string): XmlNode {
  return new Parser(source).document();
}

class Parser {
  private pos = 0;

  constructor(private readonly src: string) {}

  document(): XmlNode {
    if (this.src.charCodeAt(0) === 0xfeff) this.pos = 1;
    this.misc();
    if (this.src[this.pos] !== '<') this.fail('expected the root element');
    const root = this.element(0);
    this.misc();
    if (this.pos !== this.src.length) this.fail('unexpected content after the root element');
    return root;
  }

  /** Whitespace, comments and processing instructions, allowed around the root element. */
  private misc(): void {
    for (;;) {
      this.skipWhitespace();
      if (this.src.startsWith('<?', this.pos)) this.skipPast('?>');
      else if (this.src.startsWith('<!--', this.pos)) this.skipPast('-->');
      else if (this.src.startsWith('<!', this.pos)) this.fail('DOCTYPE and declarations are not accepted');
      else return;
    }
  }

  private element(depth: number): XmlNode {
    if (depth > MAX_DEPTH) this.fail('elements nested too deeply');
    this.pos++; // '<'
    const name = this.name();
    const node: XmlNode = { name, local: name.slice(name.indexOf(':') + 1), children: [], text: '' };
    for (;;) {
      const hadSpace = this.skipWhitespace();
      if (this.src.startsWith('/>', this.pos)) {
        this.pos += 2;
        return node;
      }
      if (this.src[this.pos] === '>') {
        this.pos++;
        break;
      }
      if (!hadSpace) this.fail('expected whitespace before an attribute');
      this.attribute();
    }
    for (;;) {
      if (this.pos >= this.src.length) this.fail(`unclosed element <${name}>`);
      if (this.src.startsWith('</', this.pos)) {
        this.pos += 2;
        const closing = this.name();
        if (closing !== name) this.fail(`</${closing}> does not close <${name}>`);
        this.skipWhitespace();
        if (this.src[this.pos] !== '>') this.fail('expected ">"');
        this.pos++;
        return node;
      }
      if (this.src.startsWith('<!--', this.pos)) this.skipPast('-->');
      else if (this.src.startsWith('<![CDATA[', this.pos)) {
        const end = this.src.indexOf(']]>', this.pos + 9);
        if (end < 0) this.fail('unterminated CDATA section');
        node.text += this.src.slice(this.pos + 9, end);
        this.pos = end + 3;
      } else if (this.src.startsWith('<?', this.pos)) this.skipPast('?>');
      else if (this.src[this.pos] === '<') node.children.push(this.element(depth + 1));
      else {
        const end = this.src.indexOf('<', this.pos);
        const raw = this.src.slice(this.pos, end < 0 ? this.src.length : end);
        if (raw.includes(']]>')) this.fail('"]]>" in character data');
        node.text += this.decodeEntities(raw);
        this.pos += raw.length;
      }
    }
  }

  private attribute(): void {
    this.name();
    this.skipWhitespace();
    if (this.src[this.pos] !== '=') this.fail('expected "=" after an attribute name');
    this.pos++;
    this.skipWhitespace();
    const quote = this.src[this.pos];
    if (quote !== '"' && quote !== "'") this.fail('expected a quoted attribute value');
    const end = this.src.indexOf(quote, this.pos + 1);
    if (end < 0) this.fail('unterminated attribute value');
    const raw = this.src.slice(this.pos + 1, end);
    if (raw.includes('<')) this.fail('"<" inside an attribute value');
    this.decodeEntities(raw);
    this.pos = end + 1;
  }

  private name(): string {
    const start = this.pos;
    if (!NAME_START.test(this.src[this.pos] ?? '')) this.fail('expected a name');
    this.pos++;
    while (this.pos < this.src.length && NAME_CHAR.test(this.src[this.pos] ?? '')) this.pos++;
    return this.src.slice(start, this.pos);
  }

  private decodeEntities(raw: string): string {
    return raw.replace(/&([^;&]*);?/g, (match, body: string) => {
      if (!match.endsWith(';')) this.fail('unterminated entity reference');
      switch (body) {
        case 'amp':
          return '&';
        case 'lt':
          return '<';
        case 'gt':
          return '>';
        case 'quot':
          return '"';
        case 'apos':
          return "'";
      }
      const numeric = /^#(?:x([0-9A-Fa-f]{1,6})|([0-9]{1,7}))$/.exec(body);
      if (numeric) {
        const code = numeric[1] !== undefined ? Number.parseInt(numeric[1], 16) : Number(numeric[2]);
        if (code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff))
          return String.fromCodePoint(code);
      }
      return this.fail(`unknown entity &${body};`);
    });
  }

  private skipWhitespace(): boolean {
    const start = this.pos;
    while (/[ \t\r\n]/.test(this.src[this.pos] ?? '')) this.pos++;
    return this.pos > start;
  }

  private skipPast(terminator: string): void {
    const end = this.src.indexOf(terminator, this.pos + 2);
    if (end < 0) this.fail(`expected "${terminator}"`);
    this.pos = end + terminator.length;
  }

  private fail(message: string): never {
    throw new XmlSyntaxError(message, this.pos);
  }
}

/** The direct children of `node` with local name `local`. */
export function childrenNamed(node: XmlNode, local: string): XmlNode[] {
  return node.children.filter((c) => c.local === local);
}

/** The text of the single direct child named `local`, or undefined when there is none. */
export function childText(node: XmlNode, local: string): string | undefined {
  return node.children.find((c) => c.local === local)?.text;
}
