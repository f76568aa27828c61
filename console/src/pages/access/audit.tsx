import { useState } from 'preact/hooks';
import { query } from '../../api';
import { when } from '../../format';
import { Status, useApi } from '../../loading';
import { useCan } from '../../session';
import { TableHead } from '../../table-head';
import { AuditFilterForm, type AuditFilters, auditQueryOf } from './audit-filters';
import { AuditVerify } from './audit-verify';
import type { AuditEntry, User } from './types';

const PAGE_SIZE = 20;

/** Who acted: the user (by name when the page lists them), the key they used, and how they came in. */
function actorOf(entry: AuditEntry, username: (id: string) => string): string {
  const { user_id, key_id, via } = entry.actor;
  const who = user_id ? username(user_id) : (key_id ?? 'no one signed in');
  const using = user_id && key_id ? ` with ${key_id}` : '';
  return `${who}${using} (${via})`;
}

/** The audit trail, newest first, a page at a time, filtered as the API can; and the chain's check. */
export function AuditSection({ users }: { users: User[] }) {
  const [filters, setFilters] = useState<AuditFilters>({});
  const [page, setPage] = useState(1);
  const canRead = useCan('audit.read');
  const { data: entries, error } = useApi<AuditEntry[]>(
    `/access/audit/${query({ ...auditQueryOf(filters), page, page_size: PAGE_SIZE })}`,
  );
  const username = (id: string) => users.find((u) => u.id === id)?.username ?? id;

  return (
    <section aria-labelledby="audit-title">
      <h2 id="audit-title">Audit trail</h2>
      {/* Without the permission the list shows the API's refusal; there is nothing to filter or verify. */}
      {canRead && <AuditVerify />}
      {canRead && (
        <AuditFilterForm
          onApply={(next) => {
            setFilters(next);
            setPage(1);
          }}
        />
      )}
      <Status error={error} loading={entries === null} />
      {entries && (
        <table class="audit">
          <caption>
            Page {page}, newest first{entries.length === 0 ? ': no entries' : ''}
          </caption>
          <TableHead columns={['Entry', 'Time', 'Actor', 'Action', 'Target', 'Outcome', 'Request', 'Address']} />
          <tbody>
            {entries.map((e) => (
              <tr data-entry={e.id}>
                <td>{e.id}</td>
                <td>{when(e.time)}</td>
                <td>{actorOf(e, username)}</td>
                <td>{e.action}</td>
                <td>{e.target.id ? `${e.target.type} ${e.target.id}` : e.target.type}</td>
                <td>{e.outcome}</td>
                <td>{e.request_id}</td>
                <td>{e.ip}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <nav class="pager" aria-label="Audit pages">
        <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>
          Newer
        </button>
        <button type="button" disabled={!entries || entries.length < PAGE_SIZE} onClick={() => setPage(page + 1)}>
          Older
        </button>
      </nav>
    </section>
  );
}
