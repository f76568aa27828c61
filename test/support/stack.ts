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
};
