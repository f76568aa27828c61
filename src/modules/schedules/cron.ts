/** The shorthands Temporal's cron parser takes besides five fields. */
const MACROS = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

interface CronField {
  name: string;
  min: number;
  max: number;
  /** Names standing for numbers from `min` on (months from 1, weekdays from 0). */
  names?: readonly string[];
}

const FIELDS: readonly CronField[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTHS },
  { name: 'day of week', min: 0, max: 7, names: WEEKDAYS },
];

/**
 * Why a cron expression is not five standard fields or a shorthand, or null when it is. Checked
 * here so a client learns which field is wrong (Temporal checks again when the schedule is saved).
 */
export function cronProblem(expression: string): string | null {
  const trimmed = expression.trim();
  if (trimmed.startsWith('@')) return MACROS.has(trimmed.toLowerCase()) ? null : `unknown shorthand '${trimmed}'`;
  const parts = trimmed.split(/\s+/);
  if (parts.length !== FIELDS.length)
    return `needs 5 fields (minute hour day-of-month month day-of-week), got ${parts.length}`;
  for (const [i, part] of parts.entries()) {
    const field = FIELDS[i] as CronField;
    for (const item of part.split(',')) {
      const problem = itemProblem(item, field);
      if (problem) return `${field.name} '${part}': ${problem}`;
    }
  }
  return null;
}

function itemProblem(item: string, field: CronField): string | null {
  const [range, step, extra] = item.split('/');
  if (extra !== undefined || range === undefined || range === '') return `'${item}' is not a value, range or step`;
  if (step !== undefined && !/^[1-9]\d{0,3}$/.test(step)) return `step '${step}' is not a positive whole number`;
  if (range === '*') return null;
  const [from, to, more] = range.split('-');
  if (more !== undefined) return `'${range}' is not a range`;
  const a = valueOf(from ?? '', field);
  const b = to === undefined ? a : valueOf(to, field);
  if (a === null || b === null) return `'${range}' is outside ${field.min}-${field.max}`;
  return a <= b ? null : `range '${range}' runs backwards`;
}

function valueOf(text: string, field: CronField): number | null {
  const named = field.names?.indexOf(text.toLowerCase()) ?? -1;
  if (named >= 0) return named + (field.name === 'month' ? 1 : 0);
  if (!/^\d{1,2}$/.test(text)) return null;
  const n = Number(text);
  return n >= field.min && n <= field.max ? n : null;
}
