/**
 * Symbolic sizes of torch.export: `as_expr.expr_str` holds a sympy expression, written either
 * as sympy's srepr (`Mul(Integer(4), Symbol('s23', positive=True, integer=True))`, what
 * PyTorch 2.5+ writes) or as plain text (`s0`, `2*s0`, `s0//4`, `Max(s0, 4)`). Both parse to a
 * lib/ir/symbolic Dim built with the sym* builders, so equal sizes compare equal.
 */
import { symAdd, symFloorDiv, symMax, symMin, symMod, symMul, symSub, sym, SymbolicLimitError, type Dim } from '../../ir/symbolic';

type Token =
  | { kind: 'num'; value: number }
  | { kind: 'id'; value: string }
  | { kind: 'str'; value: string }
  | { kind: 'op'; value: string };

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (/\d/.test(c)) {
      let j = i;
      while (j < text.length && /\d/.test(text[j]!)) j++;
      const value = Number(text.slice(i, j));
      if (!Number.isSafeInteger(value)) throw new SymbolicLimitError(`the integer ${text.slice(i, j)} is past 2^53, where sizes are not exact`);
      tokens.push({ kind: 'num', value });
      i = j;
    } else if (/[A-Za-z_]/.test(c)) {
      let j = i;
      while (j < text.length && /[A-Za-z0-9_]/.test(text[j]!)) j++;
      tokens.push({ kind: 'id', value: text.slice(i, j) });
      i = j;
    } else if (c === "'" || c === '"') {
      const end = text.indexOf(c, i + 1);
      if (end < 0) throw new SyntaxError('unterminated string');
      tokens.push({ kind: 'str', value: text.slice(i + 1, end) });
      i = end + 1;
    } else if (text.startsWith('//', i) || text.startsWith('**', i)) {
      tokens.push({ kind: 'op', value: text.slice(i, i + 2) });
      i += 2;
    } else if ('+-*%(),='.includes(c)) {
      tokens.push({ kind: 'op', value: c });
      i++;
    } else {
      throw new SyntaxError(`unexpected character ${JSON.stringify(c)}`);
    }
  }
  return tokens;
}

/** A parsed argument: a dim, a string (Symbol's name) or a keyword argument (ignored). */
type Item = Dim | { str: string } | { keyword: string };

const isDim = (x: Item): x is Dim => typeof x === 'number' || 'op' in x;

function power(base: Dim, exponent: Dim): Dim {
  if (typeof exponent !== 'number' || !Number.isInteger(exponent) || exponent < 0 || exponent > 64) {
    throw new SyntaxError('only small non-negative integer powers are supported');
  }
  let r: Dim = 1;
  for (let k = 0; k < exponent; k++) r = symMul(r, base);
  return r;
}

function fold(items: Dim[], op: (a: Dim, b: Dim) => Dim, name: string): Dim {
  if (items.length === 0) throw new SyntaxError(`${name}() needs arguments`);
  return items.slice(1).reduce(op, items[0]!);
}

/** sympy (and torch.utils._sympy) functions that can appear in a size expression. */
function applyFunction(name: string, args: Item[]): Dim {
  const dims = args.filter(isDim);
  const two = (): [Dim, Dim] => {
    if (dims.length !== 2) throw new SyntaxError(`${name}() takes 2 arguments, got ${dims.length}`);
    return [dims[0]!, dims[1]!];
  };
  switch (name) {
    case 'Symbol': {
      const label = args[0];
      if (label === undefined || isDim(label) || !('str' in label)) throw new SyntaxError("Symbol() needs a name ('s0')");
      return sym(label.str);
    }
    case 'Integer':
      if (dims.length !== 1 || typeof dims[0] !== 'number') throw new SyntaxError('Integer() takes one integer');
      return dims[0]!;
    case 'Add':
      return fold(dims, symAdd, name);
    case 'Mul':
      return fold(dims, symMul, name);
    case 'FloorDiv':
    case 'CleanDiv': // exact division: floor division gives the same value
      return symFloorDiv(...two());
    case 'Mod':
    case 'PythonMod':
      return symMod(...two());
    case 'Max':
      return fold(dims, symMax, name);
    case 'Min':
      return fold(dims, symMin, name);
    case 'Pow':
      return power(...two());
    default:
      throw new SyntaxError(`unsupported function ${name}()`);
  }
}

class Parser {
  private pos = 0;
  constructor(private readonly tokens: Token[]) {}

  private peek(): Token | undefined {
    return this.tokens[this.pos];
  }

  private isOp(value: string): boolean {
    const t = this.peek();
    return t !== undefined && t.kind === 'op' && t.value === value;
  }

  private expect(value: string): void {
    if (!this.isOp(value)) throw new SyntaxError(`expected "${value}"`);
    this.pos++;
  }

  parse(): Dim {
    const d = this.expression();
    if (this.pos !== this.tokens.length) throw new SyntaxError('unexpected text after the expression');
    return d;
  }

  private expression(): Dim {
    let left = this.term();
    while (this.isOp('+') || this.isOp('-')) {
      const op = (this.tokens[this.pos++] as { value: string }).value;
      const right = this.term();
      left = op === '+' ? symAdd(left, right) : symSub(left, right);
    }
    return left;
  }

  private term(): Dim {
    let left = this.unary();
    while (this.isOp('*') || this.isOp('//') || this.isOp('%')) {
      const op = (this.tokens[this.pos++] as { value: string }).value;
      const right = this.unary();
      left = op === '*' ? symMul(left, right) : op === '//' ? symFloorDiv(left, right) : symMod(left, right);
    }
    return left;
  }

  private unary(): Dim {
    if (this.isOp('-')) {
      this.pos++;
      return symMul(this.unary(), -1);
    }
    const base = this.primary();
    if (this.isOp('**')) {
      this.pos++;
      return power(base, this.unary());
    }
    return base;
  }

  private item(): Item {
    const t = this.peek();
    if (t?.kind === 'str') {
      this.pos++;
      return { str: t.value };
    }
    const next = this.tokens[this.pos + 1];
    if (t?.kind === 'id' && next?.kind === 'op' && next.value === '=') {
      this.pos += 2;
      // A keyword value (positive=True, integer=True): irrelevant to the size.
      const value = this.peek();
      if (value?.kind === 'id' || value?.kind === 'str') this.pos++;
      else this.expression();
      return { keyword: t.value };
    }
    return this.expression();
  }

  private primary(): Dim {
    const t = this.peek();
    if (t === undefined) throw new SyntaxError('unexpected end of expression');
    if (t.kind === 'num') {
      this.pos++;
      return t.value;
    }
    if (t.kind === 'op' && t.value === '(') {
      this.pos++;
      const d = this.expression();
      this.expect(')');
      return d;
    }
    if (t.kind === 'id') {
      this.pos++;
      if (this.isOp('(')) {
        this.pos++;
        const args: Item[] = [];
        if (!this.isOp(')')) {
          args.push(this.item());
          while (this.isOp(',')) {
            this.pos++;
            args.push(this.item());
          }
        }
        this.expect(')');
        return applyFunction(t.value, args);
      }
      if (t.value === 'True' || t.value === 'False') throw new SyntaxError(`${t.value} is not a size`);
      return sym(t.value);
    }
    throw new SyntaxError(`unexpected "${t.value}"`);
  }
}

/**
 * Parses a torch.export size expression into a Dim. Throws a SyntaxError saying what is not
 * understood, or a SymbolicLimitError for an expression past the limits of lib/ir/symbolic
 * (integers past 2^53 included); the caller names the value it belongs to.
 */
export function parseSymExpr(text: string): Dim {
  return new Parser(tokenize(text)).parse();
}
