import { useState } from 'preact/hooks';
import { api } from '../../api';
import { Status, useAction } from '../../loading';
import type { AuditVerification } from './types';

/**
 * GET /api/access/audit/verify/ on request, not on every visit: it walks the whole chain. Its result
 * is a status when the chain is intact, an alert naming the first entry changed or missing when not.
 */
export function AuditVerify() {
  const action = useAction();
  const [result, setResult] = useState<AuditVerification | null>(null);
  const verify = () =>
    action.act(async () => {
      setResult(null);
      setResult(await api<AuditVerification>('/access/audit/verify/'));
    });
  const broken =
    result && !result.ok
      ? `The chain breaks at ${result.first_bad_id ?? 'an entry'}${result.detail ? `: ${result.detail}` : ''} (${result.entries} entries walked)`
      : null;
  return (
    <div class="verify">
      <button type="button" disabled={action.busy} onClick={() => void verify()}>
        Verify the chain
      </button>
      <Status
        error={action.error ?? broken}
        notice={result?.ok ? `The chain is intact: ${result.entries} entries, none changed or missing` : null}
        loading={action.busy}
      />
    </div>
  );
}
