/** A JSON value typed by hand: its text, and what it parses to (or why it does not). */
export function parseJson(text: string): { value: unknown } | { problem: string } {
  if (text.trim() === '') return { value: null };
  try {
    return { value: JSON.parse(text) };
  } catch (err) {
    return { problem: err instanceof Error ? err.message : String(err) };
  }
}

/** A labelled textarea for JSON, saying while it is typed whether it parses. */
export function JsonField({
  label,
  name,
  text,
  onText,
  hint,
}: {
  label: string;
  name: string;
  text: string;
  onText: (text: string) => void;
  hint?: string;
}) {
  const parsed = parseJson(text);
  const problemId = `${name}-problem`;
  return (
    <label class="json-field">
      {label}
      {hint && <small>{hint}</small>}
      <textarea
        name={name}
        rows={4}
        spellcheck={false}
        value={text}
        aria-invalid={'problem' in parsed}
        aria-describedby={'problem' in parsed ? problemId : undefined}
        onInput={(e) => onText(e.currentTarget.value)}
      />
      {'problem' in parsed && (
        <small id={problemId} class="error">
          Not JSON: {parsed.problem}
        </small>
      )}
    </label>
  );
}
