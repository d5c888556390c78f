/**
 * The validating JSON reader of program files: every failure is a BadProgramError prefixed
 * with the file's label.
 */
import { BadProgramError } from '../../errors';
import { isDType, type DType } from '../../ir/dtype';
import { describeJson, JsonReader } from '../../ir/json-reader';
import { BLOB_NAME, MAX_DEPTH } from './manifest';

export const describe = (x: unknown): string => describeJson(x, 60);

/** Validating accessors over untrusted JSON; every failure is a BadProgramError prefixed with the label. */
export class Reader extends JsonReader {
  constructor(label: string) {
    super(label, { maxDepth: MAX_DEPTH, quoteLength: 60, strict: true });
  }

  fail(message: string, details?: Record<string, unknown>): never {
    throw new BadProgramError(`${this.label}: ${message}`, details === undefined ? undefined : { details });
  }

  strings(x: unknown, what: string): string[] {
    return this.array(x, what).map((s, i) => this.string(s, `${what}[${i}]`));
  }

  boolean(x: unknown, what: string): boolean {
    if (typeof x !== 'boolean') this.fail(`${what} is not a boolean (got ${describe(x)})`);
    return x;
  }

  dtype(x: unknown, what: string): DType {
    if (!isDType(x)) this.fail(`${what} is the unknown dtype ${describe(x)}`);
    return x;
  }

  blobRef(x: unknown, what: string, referenced: Set<string>): string {
    const name = this.string(x, what);
    if (!BLOB_NAME.test(name)) this.fail(`${what} names the blob ${describe(name)}, which is not a blob name`);
    if (referenced.has(name)) this.fail(`${what} names the blob "${name}", which something else already uses`);
    referenced.add(name);
    return name;
  }
}

