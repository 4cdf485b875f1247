// A small evaluator of PocketBase's record-API filter syntax, enough for the
// filters the client sends: identifiers, '...' literals (with \ escapes),
// = != < <= > >= ~ (LIKE, with \ escaping % and _), && || and parentheses.
// Values compare as text, as SQLite compares PocketBase's text columns; an
// absent field reads as "" (PocketBase's empty value).
type Row = Record<string, unknown>;
type Node = (row: Row) => boolean;
type Token = { kind: "id" | "str" | "op" | "paren"; text: string };

function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (c === " ") { i++; continue; }
    if (c === "(" || c === ")") { out.push({ kind: "paren", text: c }); i++; continue; }
    if (c === "'") {
      let text = "";
      for (i++; src[i] !== "'"; i++) {
        if (i >= src.length) throw new Error(`unterminated literal in ${src}`);
        if (src[i] === "\\") i++;
        text += src[i];
      }
      i++;
      out.push({ kind: "str", text });
      continue;
    }
    const op = /^(&&|\|\||!=|<=|>=|=|<|>|~)/.exec(src.slice(i));
    if (op) { out.push({ kind: "op", text: op[1]! }); i += op[1]!.length; continue; }
    const id = /^[a-z_][a-z0-9_]*/i.exec(src.slice(i));
    if (id) { out.push({ kind: "id", text: id[0] }); i += id[0].length; continue; }
    throw new Error(`cannot read ${JSON.stringify(src.slice(i))} in ${src}`);
  }
  return out;
}

function likeMatches(value: string, pattern: string): boolean {
  let re = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "\\" && i + 1 < pattern.length) re += pattern[++i]!.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    else if (c === "%") re += ".*";
    else if (c === "_") re += ".";
    else re += c.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${re}$`, "is").test(value);
}

export function compileFilter(src: string): Node {
  const tokens = tokenize(src);
  let at = 0;
  const peek = () => tokens[at];
  const take = (text?: string): Token => {
    const t = tokens[at++];
    if (!t || (text !== undefined && t.text !== text)) throw new Error(`expected ${text ?? "a token"} at ${at - 1} in ${src}`);
    return t;
  };
  const operand = (): ((row: Row) => string) => {
    const t = take();
    if (t.kind === "str") return () => t.text;
    if (t.kind === "id") return (row) => String(row[t.text] ?? "");
    throw new Error(`unexpected ${t.text} in ${src}`);
  };
  const primary = (): Node => {
    if (peek()?.text === "(") {
      take("(");
      const inner = or();
      take(")");
      return inner;
    }
    const left = operand();
    const op = take().text;
    const right = operand();
    switch (op) {
      case "=": return (r) => left(r) === right(r);
      case "!=": return (r) => left(r) !== right(r);
      case "<": return (r) => left(r) < right(r);
      case "<=": return (r) => left(r) <= right(r);
      case ">": return (r) => left(r) > right(r);
      case ">=": return (r) => left(r) >= right(r);
      case "~": return (r) => likeMatches(left(r), right(r));
      default: throw new Error(`unexpected operator ${op} in ${src}`);
    }
  };
  const and = (): Node => {
    let node = primary();
    while (peek()?.text === "&&") { take(); const l = node, r = primary(); node = (row) => l(row) && r(row); }
    return node;
  };
  const or = (): Node => {
    let node = and();
    while (peek()?.text === "||") { take(); const l = node, r = and(); node = (row) => l(row) || r(row); }
    return node;
  };
  const node = or();
  if (at !== tokens.length) throw new Error(`trailing tokens in ${src}`);
  return node;
}
