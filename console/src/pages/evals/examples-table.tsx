import { useState } from 'preact/hooks';
import { TableHead } from '../../table-head';
import { ConsoleLink } from './console-link';
import type { Example } from './eval-types';

const STEP = 100;
const SHOWN = [
  ['all', 'all rows'],
  ['failed', 'failed rows'],
  ['passed', 'passed rows'],
] as const;
type Shown = (typeof SHOWN)[number][0];

const keeps = (shown: Shown, e: Example) => shown === 'all' || e.is_correct === (shown === 'passed');

export function Verdict({ correct }: { correct: boolean }) {
  return <span class={`verdict verdict-${correct ? 'pass' : 'fail'}`}>{correct ? 'pass' : 'fail'}</span>;
}

/** An eval run's scored rows: input, expected, output, pass or fail, the scorer's note, the row's own run. */
export function ExamplesTable({ examples }: { examples: readonly Example[] }) {
  const [shown, setShown] = useState<Shown>('all');
  const [limit, setLimit] = useState(STEP);
  const kept = examples.filter((e) => keeps(shown, e));
  return (
    <>
      <label class="inline">
        Show
        <select
          name="shown"
          value={shown}
          onChange={(e) => {
            setShown(e.currentTarget.value as Shown);
            setLimit(STEP);
          }}
        >
          {SHOWN.map(([value, label]) => (
            <option value={value}>{label}</option>
          ))}
        </select>
      </label>
      <table class="examples">
        <caption>
          {kept.length} of {examples.length} scored rows
          {kept.length > limit ? `, the first ${limit} shown` : ''}
        </caption>
        <TableHead columns={['Row', 'Input', 'Expected', 'Output', 'Result', 'Note', 'Row run']} />
        <tbody>
          {kept.slice(0, limit).map((e) => (
            <tr data-example={e.example_id}>
              <td>{e.example_id}</td>
              <td class="plain-text">{e.prompt}</td>
              <td class="plain-text">{e.ground_truth_answer}</td>
              <td class="plain-text">{e.predicted_answer}</td>
              <td class="result">
                <Verdict correct={e.is_correct} />
              </td>
              <td class="plain-text">{e.note ?? ''}</td>
              <td>
                <ConsoleLink to={`/runs/${encodeURIComponent(e.run_id)}`}>{e.run_id}</ConsoleLink> {e.run_status}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {kept.length > limit && (
        <button type="button" onClick={() => setLimit(limit + STEP)}>
          Show {Math.min(STEP, kept.length - limit)} more rows
        </button>
      )}
    </>
  );
}
