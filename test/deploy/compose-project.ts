// Loads docker-compose.yml the way an operator deploys it (`cp .env.example .env`, fill in the
// required values) through compose-check (compose-go, the loader of `docker compose`), and returns
// the resolved project: interpolated, env_file merged, validated against the compose spec.
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT, resolveTool } from '../../scripts/lib/tools';

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
  healthcheck?: { test: string[] } | null;
  volumes?: { type: string; source: string; target: string; read_only?: boolean }[] | null;
  stop_grace_period?: string;
  deploy?: { replicas?: number } | null;
  security_opt?: string[] | null;
  cap_add?: string[] | null;
  privileged?: boolean;
  user?: string;
}

export interface ComposeProject {
  name: string;
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
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
      execFile(bin, [dir], { env: { PATH: process.env.PATH ?? '' }, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
        if (err) resolve({ ok: false, error: stderr || err.message });
        else resolve({ ok: true, project: JSON.parse(stdout) as ComposeProject });
      });
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function readEnvExample(): string {
  return readFileSync(ENV_EXAMPLE, 'utf8');
}
