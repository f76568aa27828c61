import { useState } from 'preact/hooks';

/** GET /api/access/audit/'s filters, as the form holds them (times as a datetime-local input gives them). */
export const AUDIT_FILTERS = [
  ['actor', 'Actor (UA… or K…)'],
  ['action', 'Action'],
  ['target_type', 'Target type'],
  ['target_id', 'Target id'],
  ['request_id', 'Request id'],
  ['from', 'From'],
  ['to', 'Before'],
] as const;
export type AuditFilters = Partial<Record<(typeof AUDIT_FILTERS)[number][0], string>>;

const isTime = (key: keyof AuditFilters) => key === 'from' || key === 'to';

/** The filters as the API reads them: times in ISO with their zone, empty ones left out. */
export function auditQueryOf(filters: AuditFilters): Record<string, string | undefined> {
  return Object.fromEntries(
    Object.entries(filters).map(([key, value]) => [
      key,
      value && isTime(key as keyof AuditFilters) ? new Date(value).toISOString() : value || undefined,
    ]),
  );
}

/** The filter form: nothing is asked of the API until it is submitted. */
export function AuditFilterForm({ onApply }: { onApply: (filters: AuditFilters) => void }) {
  const [draft, setDraft] = useState<AuditFilters>({});
  return (
    <form
      class="filters"
      aria-label="Audit filters"
      onSubmit={(event) => {
        event.preventDefault();
        onApply(draft);
      }}
    >
      {AUDIT_FILTERS.map(([key, label]) => {
        const bound = {
          name: key,
          value: draft[key] ?? '',
          onInput: (e: preact.TargetedEvent<HTMLInputElement>) => setDraft({ ...draft, [key]: e.currentTarget.value }),
        };
        return (
          <label>
            {label}
            {isTime(key) ? <input type="datetime-local" {...bound} /> : <input {...bound} />}
          </label>
        );
      })}
      <button type="submit">Filter the trail</button>
    </form>
  );
}
