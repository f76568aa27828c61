import { TableHead } from '../../table-head';
import { ConsoleLink } from './console-link';
import type { Example, WouldBeRequest } from './eval-types';

function Request({ request }: { request: WouldBeRequest['request'] }) {
  if (!request) return <>nothing (a wait for a callback sends nothing itself)</>;
  return (
    <>
      <code class="plain-text">
        {request.method} {request.url}
      </code>
      <details>
        <summary>Headers and body</summary>
        <pre class="plain-text">{JSON.stringify(request.headers, null, 2)}</pre>
        <pre class="plain-text">{request.body ?? '(no body)'}</pre>
        {request.body_truncated && <p>The body is cut at 64 KiB.</p>}
      </details>
    </>
  );
}

/**
 * What the rows' nodes would have sent: an eval's rows are dry runs, so a node that would post, send
 * or write sent nothing and recorded the request instead (credentials show as `[redacted]`).
 */
export function WouldBeRequests({ examples }: { examples: readonly Example[] }) {
  const requests = examples.flatMap((e) => e.dry_run.map((d) => ({ row: e.example_id, ...d })));
  if (requests.length === 0) return <p>No row's node would have sent anything.</p>;
  return (
    <table class="would-be">
      <caption>{requests.length} requests not sent</caption>
      <TableHead columns={['Row', 'Node', 'Would have sent', 'Handed on']} />
      <tbody>
        {requests.map((d) => (
          <tr data-example={d.row} data-node={d.node_id}>
            <td>{d.row}</td>
            <td>{d.node_id}</td>
            <td>
              <Request request={d.request} />
            </td>
            <td>
              {d.output_from_run ? (
                <>
                  the output run{' '}
                  <ConsoleLink to={`/runs/${encodeURIComponent(d.output_from_run)}`}>{d.output_from_run}</ConsoleLink>{' '}
                  recorded
                </>
              ) : (
                'a stub of its output'
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
