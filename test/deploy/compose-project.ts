// Loads docker-compose.yml the way an operator deploys it (`cp .env.example .env`, fill in the
// required values) through compose-check (compose-go, the loader of `docker compose`), and returns
// the resolved project: interpolated, env_file merged, validated against the compose spec.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT, resolveTool } from '../../scripts/lib/tools';
import { hashApiKey } from '../../src/http/api-keys';

/** The parts of compose-go's project JSON the tests read. */
export interface ComposeService {
  image?: string;
  build?: { context: string };
  command?: string[] | null;
  entrypoint?: string[] | null;
  container_name?: string;
  ports?: { target: number; published?: string; host_ip?: string }[] | null;
  environment?: Record<string, string | null>;
  depends_on?: Record<string, { condition: string }> | null;
  healthcheck?: { test: string[]; interval?: string; timeout?: string } | null;
  volumes?: { type: string; source: string; target: string; read_only?: boolean }[] | null;
  stop_grace_period?: string;
  deploy?: { replicas?: number } | null;
  security_opt?: string[] | null;
  cap_add?: string[] | null;
  privileged?: boolean;
  user?: string;
  /** The networks the service joins (compose-go: name → per-service options, often null). */
  networks?: Record<string, unknown> | null;
}

export interface ComposeProject {
  name: string;
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
  networks?: Record<string, { name?: string; internal?: boolean }>;
}

export type CheckResult = { ok: true; project: ComposeProject } | { ok: false; error: string };

export const COMPOSE_FILE = path.join(REPO_ROOT, 'docker-compose.yml');
export const ENV_EXAMPLE = path.join(REPO_ROOT, '.env.example');

/** .env.example with `NAME=value` lines replaced (or appended) for the given names. */
export function envFileFrom(example: string, values: Record<string, string>): string {
  const lines = example.split('\n');
  for (const [name, value] of Object.entries(values)) {
    const at = lines.findIndex((l) => l.startsWith(`${name}=`));
    if (at >= 0) lines[at] = `${name}=${value}`;
    else lines.push(`${name}=${value}`);
  }
  return lines.join('\n');
}

/** Runs compose-check on a copy of docker-compose.yml next to a .env with the given content. */
export async function checkCompose(envFile: string): Promise<CheckResult> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'spur-compose-'));
  try {
    copyFileSync(COMPOSE_FILE, path.join(dir, 'docker-compose.yml'));
    writeFileSync(path.join(dir, '.env'), envFile);
    const bin = resolveTool('compose-check');
    // A clean environment: the shell running the tests must not change what compose resolves.
    return await new Promise<CheckResult>((resolve) => {
      execFile(
        bin,
        [dir],
        { env: { PATH: process.env.PATH ?? '' }, maxBuffer: 16 * 1024 * 1024 },
        (err, stdout, stderr) => {
          if (err) resolve({ ok: false, error: stderr || err.message });
          else resolve({ ok: true, project: JSON.parse(stdout) as ComposeProject });
        },
      );
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What an operator fills into the REQUIRED values of .env after `cp .env.example .env`. */
export const REQUIRED_VALUES = {
  SPUR_SECRET_KEY: randomBytes(32).toString('base64'),
  SPUR_API_KEY_HASHES: hashApiKey('spur_deploy_test_key'),
  POSTGRES_PASSWORD: 'a-postgres-password',
  MONGO_ROOT_USERNAME: 'spur_root',
  MONGO_ROOT_PASSWORD: randomBytes(24).toString('hex'),
};

/** The project as `docker compose` resolves it once .env holds the required values (and `values`). */
export async function loadProject(values: Record<string, string> = {}): Promise<ComposeProject> {
  const result = await checkCompose(envFileFrom(readEnvExample(), { ...REQUIRED_VALUES, ...values }));
  assert.ok(result.ok, result.ok ? '' : `compose-check refused the project:\n${result.error}`);
  return result.project;
}

/** A service's resolved environment without the variables compose leaves unset (null). */
export function definedEnvironment(service: ComposeService | undefined): Record<string, string> {
  return Object.fromEntries(
    Object.entries(service?.environment ?? {}).filter((e): e is [string, string] => typeof e[1] === 'string'),
  );
}

export function readEnvExample(): string {
  return readFileSync(ENV_EXAMPLE, 'utf8');
}
