import type { Models } from './db/models';
import { createEnvService } from './modules/env-mgmt/env-mgmt.service';
import { SecretBox } from './modules/env-mgmt/secret-box';
import { createTestFileService } from './modules/files/test-files.service';
import { createVersionService } from './modules/workflows/versions.service';
import { createWorkflowService } from './modules/workflows/workflows.service';

/** The api's business services, wired to one set of models. */
export function createServices(models: Models, secretKey: Buffer) {
  return {
    workflows: createWorkflowService(models),
    versions: createVersionService(models),
    testFiles: createTestFileService(models),
    env: createEnvService(models, new SecretBox(secretKey)),
  };
}

export type Services = ReturnType<typeof createServices>;
