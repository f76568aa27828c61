import { RequestValidationError, type ValidationDetail } from '../../errors';
import { FORM_TYPE } from '../../http/body-types';
import { parseJsonText } from '../../http/json-body';
import { pointerTokens, resolvePointer } from './json-pointer';

/**
 * A webhook's body as a value: JSON, or form fields (a field sent twice is an array of its values).
 * An empty body is `{}`: a bare POST still starts a run.
 */
export function parseHookBody(raw: Buffer, contentType: string | false | null): unknown {
  const text = raw.toString('utf8');
  if (contentType === FORM_TYPE) {
    const fields: Record<string, string | string[]> = {};
    for (const [name, value] of new URLSearchParams(text)) {
      const had = fields[name];
      fields[name] = had === undefined ? value : [...(Array.isArray(had) ? had : [had]), value];
    }
    return fields;
  }
  return text.trim() === '' ? {} : parseJsonText(text);
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
