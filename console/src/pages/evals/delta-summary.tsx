import { TableHead } from '../../table-head';
import { ConsoleLink } from './console-link';
import { percent, points } from './eval-format';
import type { Comparison } from './eval-types';

/** What the interval says, in words: an interval holding 0 cannot tell the versions apart. */
function verdictOf(c: Comparison): string {
  if (c.delta === null) return `No delta until both runs have ended: ${c.paired_samples} rows paired so far.`;
  if (c.ci_low > 0) return 'B is better: the whole interval lies above 0.';
  if (c.ci_high < 0) return 'B is worse: the whole interval lies below 0.';
  return 'The interval contains 0: these rows cannot tell the versions apart.';
}

/** Both versions' accuracy over the paired rows, the delta (B − A) with its interval, and the paired counts. */
export function DeltaSummary({ comparison: c }: { comparison: Comparison }) {
  const [a, b] = c.runs;
  return (
    <>
      <table class="versions">
        <caption>{c.paired_samples} rows scored by both versions</caption>
        <TableHead columns={['Side', 'Version', 'Eval run', 'Accuracy on the paired rows']} />
        <tbody>
          {(
            [
              ['A', a, c.accuracy_a],
              ['B', b, c.accuracy_b],
            ] as const
          ).map(([side, run, accuracy]) => (
            <tr data-side={side}>
              <th scope="row">{side}</th>
              <td>{run.workflow_version}</td>
              <td>
                <ConsoleLink to={`/evals/runs/${encodeURIComponent(run.run_id)}`}>{run.run_id}</ConsoleLink>
              </td>
              <td>
                <data value={String(accuracy)}>{percent(accuracy)}</data>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <dl class="facts delta">
        <dt>Delta (B − A)</dt>
        <dd class="delta-value">{c.delta === null ? '—' : <data value={String(c.delta)}>{points(c.delta)}</data>}</dd>
        <dt>{Math.round(c.confidence * 100)} % interval</dt>
        <dd class="interval">
          <data value={String(c.ci_low)}>{points(c.ci_low)}</data> to{' '}
          <data value={String(c.ci_high)}>{points(c.ci_high)}</data>
        </dd>
        <dt>Method</dt>
        <dd>{c.method}</dd>
      </dl>
      <p class="verdict-line">{verdictOf(c)}</p>
      <table class="counts">
        <caption>The paired rows</caption>
        <TableHead columns={['Right with both', 'Right with A only', 'Right with B only', 'Right with neither']} />
        <tbody>
          <tr>
            <td>{c.counts.both}</td>
            <td>{c.counts.only_a}</td>
            <td>{c.counts.only_b}</td>
            <td>{c.counts.neither}</td>
          </tr>
        </tbody>
      </table>
    </>
  );
}
