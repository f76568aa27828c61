// Where the dev-server binaries (the cluster's Temporal server and Prometheus, compose-check) live. scripts/setup.sh puts them in .tools/bin
// (symlinks into a per-user cache) unless they are already on PATH.
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

export type ToolName =
  'temporal' | 'ferretdb' | 'compose-check' | 'prom-parse' | 'temporal-server' | 'temporal-sql-tool' | 'prometheus';

/** Repository root (this file is scripts/lib/tools.ts). */
export const REPO_ROOT = path.resolve(__dirname, '..', '..');

const ENV_OVERRIDE: Record<ToolName, string> = {
  temporal: 'SPUR_TEMPORAL_BIN',
  ferretdb: 'SPUR_FERRETDB_BIN',
  'compose-check': 'SPUR_COMPOSE_CHECK_BIN',
  'prom-parse': 'SPUR_PROM_PARSE_BIN',
  'temporal-server': 'SPUR_TEMPORAL_SERVER_BIN',
  'temporal-sql-tool': 'SPUR_TEMPORAL_SQL_TOOL_BIN',
  prometheus: 'SPUR_PROMETHEUS_BIN',
};

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK); // follows symlinks, so a dangling link counts as missing
    return true;
  } catch {
    return false;
  }
}

function findOnPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && isExecutable(path.join(dir, name))) return path.join(dir, name);
  }
  return undefined;
}

/** Absolute path of a tool: env override, then .tools/bin in the repo, then PATH. */
export function resolveTool(name: ToolName): string {
  const envVar = ENV_OVERRIDE[name];
  const override = process.env[envVar];
  if (override) {
    if (!isExecutable(override)) throw new Error(`${envVar}=${override} is not an executable file`);
    return override;
  }
  const local = path.join(REPO_ROOT, '.tools', 'bin', name);
  if (isExecutable(local)) return local;
  const onPath = findOnPath(name);
  if (onPath) return onPath;
  throw new Error(`'${name}' not found (looked at $${envVar}, ${local} and PATH). Run \`npm run setup\` to build it.`);
}
