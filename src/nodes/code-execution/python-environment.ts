import { execFile } from 'node:child_process';
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';

/** The configured Python installation: what to run and which directories it reads. */
export interface PythonEnvironment {
  /** sys.executable: for a venv its own bin/python (the venv is found from this path). */
  executable: string;
  version: string;
  /** Directories the interpreter reads (prefixes, standard library, site-packages), outermost only. */
  roots: string[];
  /** Why this environment and not the one asked for, when it stands in for it. */
  note?: string;
}

const Probe = z.object({ executable: z.string(), version: z.string(), dirs: z.array(z.string()) });

const PROBE_CODE = [
  'import json, os, sys',
  'dirs = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, os.path.dirname(sys.executable)] + sys.path',
  'print(json.dumps({"executable": sys.executable, "version": sys.version.split()[0], "dirs": [d for d in dirs if d and os.path.isdir(d)]}))',
].join('\n');

/**
 * Asks the interpreter (outside any sandbox: no user code is involved) where it lives, with the
 * worker's own PATH so a pyenv shim or a venv resolves to the real thing. `site` is imported, as
 * it will be for user code, so the environment's site-packages are among the directories.
 */
export function resolvePythonEnvironment(interpreter: string): Promise<PythonEnvironment> {
  return new Promise((resolve, reject) => {
    execFile(interpreter, ['-I', '-c', PROBE_CODE], { timeout: 15_000 }, (error, stdout, stderr) => {
      if (error) {
        reject(
          new Error(
            `the Python interpreter "${interpreter}" (SPUR_PYTHON) does not run: ${(stderr || error.message).trim()}`,
          ),
        );
        return;
      }
      try {
        const probe = Probe.parse(JSON.parse(stdout));
        resolve({
          executable: probe.executable,
          version: probe.version,
          roots: outermost([...probe.dirs, path.dirname(realpathSync(probe.executable))]),
        });
      } catch (cause) {
        reject(
          new Error(
            `the Python interpreter "${interpreter}" (SPUR_PYTHON) answered unexpectedly: ${stdout.slice(0, 200)}`,
            { cause },
          ),
        );
      }
    });
  });
}

/** Real paths, without those inside another one (a bind of the outer one covers them). */
export function outermost(dirs: string[]): string[] {
  const real = [...new Set(dirs.map((d) => safeRealpath(d)))].sort();
  return real.filter((d) => !real.some((other) => other !== d && isInside(d, other)));
}

export function isInside(child: string, parent: string): boolean {
  return parent === '/' || child === parent || child.startsWith(parent.endsWith('/') ? parent : `${parent}/`);
}

export function safeRealpath(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return path.resolve(dir);
  }
}
