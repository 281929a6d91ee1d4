import { escapeKeyPart, LockConfigError } from '@latch/core';
import { describeValue } from './describe-value.js';

/** Builds the lock key of one call from the method's arguments. */
export type LockKeyOf = (args: readonly unknown[]) => string;

/** A key given to `@Locked()`: a template such as `'invoice:{0}'` or `'user:{0.id}'`, or a function of the arguments. */
// biome-ignore lint/suspicious/noExplicitAny: the function's parameters are the decorated method's, whatever they are.
export type LockKey<Args extends any[] = any[]> = string | ((...args: Args) => string);

type Part = { text: string } | { argument: number; path: string[]; source: string };

// `{N}` or `{N.prop.prop}`: N is a parameter index, each prop a plain identifier.
const PLACEHOLDER = /^\{(\d+)((?:\.[A-Za-z_$][\w$]*)*)\}/;

/**
 * Checks a key template (or key function) once, when the decorator is applied, and returns
 * what builds the key on every call. `where` names the method ("InvoiceService.charge") in
 * errors; `parameterCount` comes from decorator metadata when the compiler emitted it.
 */
export function compileLockKey(key: unknown, where: string, parameterCount: number | undefined): LockKeyOf {
  if (typeof key === 'function') return keyFromFunction(key as (...args: unknown[]) => unknown, where);
  if (typeof key !== 'string' || key.length === 0) {
    throw new LockConfigError(
      `@Locked() on ${where} needs a key: a non-empty string such as 'invoice:{0}', or a function of the method's arguments; got ${describeValue(key)}.`,
    );
  }
  const parts = parseTemplate(key, where);
  for (const part of parts) {
    if ('argument' in part && parameterCount !== undefined && part.argument >= parameterCount) {
      throw new LockConfigError(
        `@Locked('${key}') on ${where} uses ${part.source}, but ${where} declares ${parameterCount} parameter${parameterCount === 1 ? '' : 's'}${parameterCount > 0 ? ` ({0}${parameterCount > 1 ? ` to {${parameterCount - 1}}` : ''})` : ''}. Placeholders count the method's parameters from 0.`,
      );
    }
  }
  return (args) =>
    parts.map((part) => ('text' in part ? part.text : render(part, args, key, where))).join('');
}

function parseTemplate(template: string, where: string): Part[] {
  const parts: Part[] = [];
  let text = '';
  let rest = template;
  while (rest.length > 0) {
    const char = rest[0];
    if (char === '{') {
      const match = PLACEHOLDER.exec(rest);
      if (!match) {
        const position = template.length - rest.length;
        throw new LockConfigError(
          `@Locked('${template}') on ${where}: invalid placeholder at position ${position}. Write {0} for the first argument or {0.id} for a property of it; '{' and '}' are reserved (build such keys with a function).`,
        );
      }
      if (text) parts.push({ text });
      text = '';
      const [source, index, path] = match as unknown as [string, string, string];
      parts.push({ argument: Number(index), path: path ? path.slice(1).split('.') : [], source });
      rest = rest.slice(source.length);
    } else if (char === '}') {
      const position = template.length - rest.length;
      throw new LockConfigError(
        `@Locked('${template}') on ${where}: '}' at position ${position} closes no placeholder. '{' and '}' are reserved for placeholders such as {0} or {0.id}.`,
      );
    } else {
      text += char;
      rest = rest.slice(1);
    }
  }
  if (text) parts.push({ text });
  return parts;
}

function render(
  part: { argument: number; path: string[]; source: string },
  args: readonly unknown[],
  template: string,
  where: string,
): string {
  let value: unknown = args[part.argument];
  let reached = String(part.argument);
  for (const property of part.path) {
    if (value === null || value === undefined) break;
    value = (value as Record<string, unknown>)[property];
    reached += `.${property}`;
  }
  // Arguments often come from requests: escaped, a value cannot reach another part of the key.
  if (typeof value === 'string' && value.length > 0) return escapeKeyPart(value);
  if (typeof value === 'number' && Number.isFinite(value)) return escapeKeyPart(String(value));
  if (typeof value === 'bigint') return String(value);
  const hint =
    typeof value === 'object' && value !== null
      ? ` Name one of its properties, as in {${reached}.id}, or use a key function.`
      : '';
  throw new LockConfigError(
    `The lock key '${template}' of ${where} needs ${part.source} to be a non-empty string or a finite number, but argument ${reached} is ${describeValue(value)}.${hint}`,
  );
}

function keyFromFunction(fn: (...args: unknown[]) => unknown, where: string): LockKeyOf {
  return (args) => {
    const key = fn(...args);
    if (typeof key !== 'string' || key.length === 0) {
      throw new LockConfigError(
        `The key function of @Locked() on ${where} must return a non-empty string, but returned ${describeValue(key)}.`,
      );
    }
    return key;
  };
}
