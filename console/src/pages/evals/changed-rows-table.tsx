import { TableHead } from '../../table-head';
import { type Change, type ChangedRow } from './changed-rows';
import { Verdict } from './examples-table';

/** Each change in words, so the table says it without its colours. */
const CHANGE_WORDS: Record<Change, string> = {
  better: '▲ better: right with B only',
  worse: '▼ worse: right with A only',
  answer: 'another answer, scored the same',
};

function Answer({ side }: { side: ChangedRow['a'] }) {
  return (
    <>
      <span class="plain-text">{side.predicted_answer}</span> <Verdict correct={side.is_correct} />
    </>
  );
}

/** The rows version B answers or scores differently from version A, each marked better, worse or neither. */
export function ChangedRowsTable({ rows }: { rows: readonly ChangedRow[] }) {
  const count = (change: Change) => rows.filter((r) => r.change === change).length;
  return (
    <table class="changed-rows">
      <caption>
        {rows.length === 0
          ? 'No row changed'
          : `${rows.length === 1 ? '1 row' : `${rows.length} rows`} changed: ${count('better')} better, ${count('worse')} worse, ${count('answer')} answered otherwise with the same score`}
      </caption>
      <TableHead columns={['Row', 'Input', 'Expected', "A's answer", "B's answer", 'Change']} />
      <tbody>
        {rows.map((row) => (
          <tr data-example={row.example_id} data-change={row.change} class={`change-${row.change}`}>
            <td>{row.example_id}</td>
            <td class="plain-text">{row.prompt}</td>
            <td class="plain-text">{row.expected}</td>
            <td>
              <Answer side={row.a} />
            </td>
            <td>
              <Answer side={row.b} />
            </td>
            <td class="change">{CHANGE_WORDS[row.change]}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
