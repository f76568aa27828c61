import { useEffect, useState } from 'preact/hooks';
import { api, query } from '../../api';
import { messageOf, useApi } from '../../loading';
import type { OutputVariable, WorkflowChoice, WorkflowVersion } from './eval-types';

/** The API's largest page of workflows and versions. */
const PAGE_SIZE = 100;
/** Pages of workflows read at most: a thousand workflows to choose from. */
const MOST_PAGES = 10;

/** Every workflow of the workspace (GET /api/wf/ a page at a time), by name, for the forms' choice. */
export function useWorkflows(): { workflows: WorkflowChoice[] | null; error: string | null } {
  const [workflows, setWorkflows] = useState<WorkflowChoice[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    void (async () => {
      try {
        const all: WorkflowChoice[] = [];
        for (let page = 1; page <= MOST_PAGES; page++) {
          const batch = await api<WorkflowChoice[]>(`/wf/${query({ page, page_size: PAGE_SIZE })}`);
          all.push(...batch.map(({ id, name }) => ({ id, name })));
          if (batch.length < PAGE_SIZE) break;
        }
        setWorkflows(all.sort((x, y) => x.name.localeCompare(y.name) || x.id.localeCompare(y.id)));
      } catch (err) {
        setError(messageOf(err));
      }
    })();
  }, []);
  return { workflows, error };
}

const workflowPath = (workflowId: string, rest: string) =>
  workflowId ? `/wf/${encodeURIComponent(workflowId)}/${rest}` : null;

/** The chosen workflow's output variables (nothing asked until one is chosen). */
export const useOutputVariables = (workflowId: string) =>
  useApi<OutputVariable[]>(workflowPath(workflowId, 'output_variables/'));

/** The chosen workflow's versions, newest first (its newest hundred). */
export const useVersions = (workflowId: string) =>
  useApi<WorkflowVersion[]>(workflowPath(workflowId, `versions/${query({ page_size: PAGE_SIZE })}`));
