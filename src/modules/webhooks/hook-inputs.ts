import { PayloadTooLargeError, RequestValidationError, type ValidationDetail } from '../../errors';
import { FORM_TYPE } from '../../http/body-types';
import { parseJsonText } from '../../http/json-body';
import { pointerTokens, resolvePointer } from './json-pointer';

/** The most fields a form-encoded delivery may carry (qs's and body-parser's default limit too). */
export const MAX_FORM_FIELDS = 1000;

/**
 * A webhook's body as a value: JSON, or form fields (a field sent twice is an array of its values).
 * An empty body is `{}`: a bare POST still starts a run.
 */
export function parseHookBody(raw: Buffer, contentType: string | false | null): unknown {
  const text = raw.toString('utf8');
  if (contentType === FORM_TYPE) return formFields(text);
  return text.trim() === '' ? {} : parseJsonText(text);
}

/**
 * Form fields by name, in one pass over at most MAX_FORM_FIELDS of them: the separators are
 * counted before anything is parsed, so a megabyte of `a&a&…` is refused (413) at the cost of a scan.
 */
function formFields(text: string): Record<string, string | string[]> {
  let separators = 0;
  for (let at = text.indexOf('&'); at !== -1; at = text.indexOf('&', at + 1))
    if (++separators >= MAX_FORM_FIELDS)
      throw new PayloadTooLargeError(`A form-encoded body may have at most ${MAX_FORM_FIELDS} fields`);
  const byName = new Map<string, string[]>();
  for (const [name, value] of new URLSearchParams(text)) {
    const values = byName.get(name);
    if (values) values.push(value);
    else byName.set(name, [value]);
  }
  // Own members, whatever the name: a field called __proto__ is a field, not the object's prototype.
  return Object.fromEntries(
    [...byName].map(([name, values]) => [name, values.length === 1 ? (values[0] as string) : values]),
  );
}

const unfit = (loc: (string | number)[], msg: string, input: unknown): ValidationDetail => ({
  type: 'value_error',
  loc,
  msg,
  input,
});

/**
 * The InputNode's input from a delivery's body: each mapped field from its JSON pointer, or without
 * a mapping the whole body as the first field. A mapped field the InputNode lacks, or a pointer that
 * names nothing in this body, is a 422 naming the field.
 */
export function mapHookInputs(
  body: unknown,
  mapping: Record<string, string> | null,
  fields: readonly string[],
): Record<string, unknown> {
  const first = fields[0];
  if (mapping === null) {
    if (first === undefined)
      throw new RequestValidationError([unfit(['body'], 'The InputNode has no input fields to put the body in', null)]);
    return { [first]: body };
  }
  const problems: ValidationDetail[] = [];
  const input: Record<string, unknown> = {};
  for (const [field, pointer] of Object.entries(mapping)) {
    if (!fields.includes(field)) {
      problems.push(
        unfit(
          ['body'],
          `input_mapping names the input field '${field}', which the InputNode does not have (its fields: ${fields.join(', ') || 'none'})`,
          field,
        ),
      );
      continue;
    }
    const value = resolvePointer(body, pointer);
    if (value === undefined)
      problems.push(
        unfit(
          ['body', ...pointerTokens(pointer)],
          `The body has nothing at '${pointer}', which input_mapping maps to the input field '${field}'`,
          null,
        ),
      );
    else input[field] = value;
  }
  if (problems.length > 0) throw new RequestValidationError(problems);
  return input;
}
