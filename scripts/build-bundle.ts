// Prebuilds the workflow bundle (STYLE: production workers load it instead of bundling at start).
// Usage: tsx scripts/build-bundle.ts <out-file>
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { workflowBundleCode } from '../temporal/workflow-bundle';
import { REPO_ROOT } from './lib/tools';

export async function buildWorkflowBundle(outFile: string): Promise<string> {
  const code = await workflowBundleCode();
  mkdirSync(path.dirname(path.resolve(outFile)), { recursive: true }); // e.g. dist/ in a fresh checkout or image
  writeFileSync(outFile, code);
  return outFile;
}

if (require.main === module) {
  const out = process.argv[2] ?? path.join(REPO_ROOT, 'dist', 'workflow-bundle.js');
  void buildWorkflowBundle(out).then((file) => console.log(`workflow bundle written to ${file}`));
}
