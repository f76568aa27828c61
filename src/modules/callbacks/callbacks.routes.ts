import { defineRoute, type MountableRoute } from '../../http/route';
import { WHOLE_LIST_PAGE_MAX, WholeListQuery } from '../../http/pagination';
import { RunIdParams } from '../runs/runs.schemas';
import type { CallbackService } from './callbacks.service';
import { RunCallbacksResponse, SIGNATURE_SCHEME } from './callbacks.schemas';

export function callbackRoutes(callbacks: CallbackService): MountableRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/run/{run_id}/callbacks/',
      summary: "A run's callback deliveries, with every attempt (beyond PySpur)",
      tags: ['runs'],
      description: `The deliveries of the run's callback (given to run, start_run or start_batch_run), oldest first, ${WHOLE_LIST_PAGE_MAX} per page unless page_size says fewer. ${SIGNATURE_SCHEME}`,
      params: RunIdParams,
      query: WholeListQuery,
      response: RunCallbacksResponse,
      errors: [404],
      handler: ({ params, query }) => callbacks.list(params.run_id, query),
    }),
  ];
}
