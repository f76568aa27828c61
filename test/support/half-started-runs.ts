import assert from 'node:assert/strict';
import { createIdempotencyKeys, keyRecordId, requestHash } from '../../src/db/idempotency-keys';
import { ResumeRunRequest } from '../../src/modules/pauses/pauses.schemas';
import { RunTypeQuery, StartRunRequest } from '../../src/modules/runs/runs.schemas';
import { createServices } from '../../src/services';
import type { Engine } from './engine';

/**
 * What an api killed in the middle of a keyed `start_run` leaves behind, made with the api's own
 * code path: the run recorded (naming its key) and, with `claimed`, the key claimed for it; its
 * workflow never started, no answer sent. Returns the run's id.
 */
export async function keyedRunLeftUnstarted(engine: Engine, workflowId: string, key: string, initialInputs: Record<string, unknown>, claimed: boolean): Promise<string> {
  const services = createServices({ models: engine.api.models, secretKey: Buffer.from(engine.api.env.SPUR_SECRET_KEY as string, 'base64'), temporal: engine.api.temporal, config: engine.api.config });
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

/**
 * What an api killed in the middle of a keyed `process_pause_action` leaves behind: the key claimed
 * for the run, no answer stored; with `applied`, the decision went through to the workflow (the api's
 * own code path, under the key's update id) before the api died.
 */
export async function keyedPauseActionLeftUnanswered(engine: Engine, runId: string, key: string, decision: Record<string, unknown>, applied: boolean): Promise<void> {
  const services = createServices({ models: engine.api.models, secretKey: Buffer.from(engine.api.env.SPUR_SECRET_KEY as string, 'base64'), temporal: engine.api.temporal, config: engine.api.config });
  const keys = createIdempotencyKeys(engine.api.models, services.values);
  const body = ResumeRunRequest.parse(decision);
  const scope = { principal: null, route: 'process_pause_action', target: runId, key };
  const keyId = keyRecordId(scope);
  assert.ok(await keys.claim({ id: keyId, scope, bodyHash: requestHash(body), runId, now: new Date(), ttlMs: engine.api.config.idempotency.ttlMs }));
  if (applied) assert.equal((await services.pauses.act(runId, body, keyId)).status, 200);
}
