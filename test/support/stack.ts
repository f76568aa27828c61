import { distEntry } from '../../scripts/build';
// What the harness (scripts/test.ts) started for this run: real FerretDB and Temporal servers.
function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the suite with \`npm test\`, which starts the servers`);
  return value;
}

export const stack = {
  get mongoUri() {
    return required('SPUR_TEST_MONGODB_URI');
  },
  get temporalAddress() {
    return required('SPUR_TEST_TEMPORAL_ADDRESS');
  },
  get tmpDir() {
    return required('SPUR_TEST_TMP');
  },
  get workflowBundle() {
    return required('SPUR_TEST_WORKFLOW_BUNDLE');
  },
  /** The api and worker compiled to JavaScript (scripts/build.ts), as the image runs them. */
  get dist() {
    return required('SPUR_TEST_DIST');
  },
};

/** `node <entry>` as the image runs it: the compiled file of a source entry such as `src/processes/worker.ts`. */
export function entryArgs(entry: string): string[] {
  return [distEntry(entry, stack.dist)];
}
