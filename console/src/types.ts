// The API's shapes, as the server's own schemas declare them (types only: nothing of the server is bundled).
import type { RunResponse } from '../../src/runs/response.schemas';

export type Run = RunResponse;
export type Task = RunResponse['tasks'][number];
