/**
 * PySpur's timestamp form: UTC, ISO 8601 without an offset (`2025-03-01T12:34:56.789`), as its
 * pydantic models serialise naive datetimes. PySpur's web UI relies on
 * it: it appends `Z` to run and version times before parsing, and `…ZZ` is an invalid date that
 * crashes the editor's run and version menus.
 */
export function pyDateTime(date: Date): string {
  return date.toISOString().replace(/Z$/, '');
}
