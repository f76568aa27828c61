import type { Models } from '../../src/db/models';
import { pingMongo } from '../../src/db/connection';

export interface ActivityDeps {
  models: Models;
}

/** Activities get their dependencies by closure (plain factory, no container). */
export function createActivities({ models }: ActivityDeps) {
  return {
    /** Lets an operator see from the Temporal UI that a worker reaches MongoDB. */
    async checkStorage(): Promise<'ok'> {
      await pingMongo(models.conn);
      return 'ok';
    },
  };
}

export type Activities = ReturnType<typeof createActivities>;
