import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createIdempotencyKeys, keyRecordId, requestHash } from '../../src/db/idempotency-keys';
import { RunTypeQuery, StartRunRequest } from '../../src/modules/runs/runs.schemas';
import { createServices } from '../../src/services';
import type { Engine } from './engine';

/**
 * What an api killed in the middle of a keyed `start_run` leaves behind, made with the api's own
 * code path: the run recorded (naming its key) and, with `claimed`, the key claimed for it; its
 * workflow never started, no answer sent. Returns the run's id.
 */
export async function keyedRunLeftUnstarted(engine: Engine, workflowId: string, key: string, initialInputs: Record<string, unknown>, claimed: boolean): Promise<string> {
  const services = createServices({ models: engine.api.models, secretKey: randomBytes(32), temporal: engine.api.temporal, config: engine.api.config });
  const keys = createIdempotencyKeys(engine.api.models, services.values);
  const body = StartRunRequest.parse({ initial_inputs: initialInputs });
  const scope = { principal: null, route: 'start_run', target: workflowId, key };
  const keyId = keyRecordId(scope);
  const bodyHash = requestHash({ query: RunTypeQuery.parse({}), body });
  const killed = new Error('the api was killed here');
  let runId = '';
  const claim = async (id: string) => {
    runId = id;
    if (claimed) assert.ok(await keys.claim({ id: keyId, scope, bodyHash, runId: id, now: new Date(), ttlMs: engine.api.config.idempotency.ttlMs }));
    throw killed;
  };
  await assert.rejects(services.runStarter.start(workflowId, body, 'interactive', { keyId, claim, started: async () => undefined }), killed);
  return runId;
}
