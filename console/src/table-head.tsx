/** A table's column headings (each a `th` with its scope, for screen readers). */
export function TableHead({ columns }: { columns: ReadonlyArray<string | false | undefined> }) {
  return (
    <thead>
      <tr>
        {columns
          .filter((c): c is string => typeof c === 'string')
          .map((c) => (
            <th scope="col">{c}</th>
          ))}
      </tr>
    </thead>
  );
}
