import { when } from '../../format';
import { TableHead } from '../../table-head';
import { ConsoleLink } from './console-link';
import type { Suite } from './eval-types';

/** The workspace's suites, oldest first as the API lists them; each name opens the suite's details. */
export function SuitesTable({ suites }: { suites: readonly Suite[] }) {
  return (
    <table class="suites">
      <caption>
        {suites.length === 0 ? 'No suites yet' : suites.length === 1 ? '1 suite' : `${suites.length} suites`}
      </caption>
      <TableHead columns={['Suite', 'Type', 'Rows', 'Scorer', 'Answer column', 'Created']} />
      <tbody>
        {suites.map((suite) => (
          <tr data-suite={suite.id}>
            <td>
              <ConsoleLink to={`/evals/suites/${encodeURIComponent(suite.id)}`}>{suite.name}</ConsoleLink>
            </td>
            <td>{suite.type}</td>
            <td>{suite.num_samples}</td>
            <td>{suite.scorer.type}</td>
            <td>{suite.answer_column}</td>
            <td>{when(suite.created_at)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
