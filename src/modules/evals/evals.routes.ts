import { z } from 'zod';
import { BadRequestError } from '../../errors';
import { defineRoute, type MountableRoute } from '../../http/route';

const tags = ['evals'];
const NOT_AVAILABLE =
  "Spur has no built-in evals (PySpur's benchmark suites are not part of it): run a workflow as a batch over a dataset instead";

/**
 * PySpur's evals page asks for its benchmark suites and their runs when it opens. Spur ships none,
 * so both lists are empty and launching one says why, instead of the page failing.
 */
export function evalRoutes(): MountableRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/evals/',
      summary: 'Available evals (none in Spur)',
      tags,
      response: z.array(z.record(z.string(), z.unknown())),
      handler: () => [],
    }),
    defineRoute({
      method: 'get',
      path: '/evals/runs/',
      summary: 'Eval runs (none in Spur)',
      tags,
      response: z.array(z.record(z.string(), z.unknown())),
      handler: () => [],
    }),
    defineRoute({
      method: 'post',
      path: '/evals/launch/',
      summary: 'Launch an eval (not available in Spur)',
      tags,
      response: null,
      errors: [400],
      handler: () => {
        throw new BadRequestError(NOT_AVAILABLE, 'EVALS_NOT_AVAILABLE');
      },
    }),
  ];
}
