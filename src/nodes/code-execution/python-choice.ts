import { statSync } from 'node:fs';
import path from 'node:path';
import type { PythonSettings } from '../../config/settings';
import { type PythonEnvironment, isInside, resolvePythonEnvironment } from './python-environment';
import { exposedPrivateDirs } from './private-dirs';
import { SANDBOX_UID, sandboxReadableDirs } from './sandbox';

/** Where a distribution's own interpreter lives: outside any home folder. */
const SYSTEM_INTERPRETERS = ['/usr/bin/python3', '/usr/local/bin/python3'];

/**
 * The Python environment user code runs in, and one the sandbox can both reach and show safely;
 * rejects with the reason and the setting to change when there is none.
 */
export async function choosePython(settings: Readonly<PythonSettings>): Promise<PythonEnvironment> {
  return refuseExposing(await chooseEnvironment(settings), settings);
}

/**
 * SPUR_PYTHON when set; else `python3` on PATH, unless a root worker's sandbox user cannot enter
 * its folder (pyenv under /root): then the system's interpreter, noted for health, so a fresh
 * machine runs Python nodes sandboxed with nothing set.
 */
async function chooseEnvironment(settings: Readonly<PythonSettings>): Promise<PythonEnvironment> {
  const configured = settings.interpreter;
  const python = await resolvePythonEnvironment(configured ?? 'python3');
  const blocked = blockedDir(python, settings);
  if (!blocked) return python;
  const cannotEnter = `the Python environment ${python.roots.find((root) => isInside(root, blocked)) ?? python.executable} is inside ${blocked}, which the sandbox user (uid ${SANDBOX_UID}, used when the worker runs as root) cannot enter`;
  if (configured !== undefined)
    throw new Error(`${cannotEnter}; set SPUR_PYTHON to an interpreter outside it, e.g. /usr/bin/python3`);
  for (const candidate of SYSTEM_INTERPRETERS) {
    const system = await resolvePythonEnvironment(candidate).catch(() => undefined);
    if (system && !blockedDir(system, settings))
      return {
        ...system,
        note: `python3 on PATH cannot be used: ${cannotEnter}, so ${candidate} runs user code (SPUR_PYTHON chooses another)`,
      };
  }
  throw new Error(
    `${cannotEnter}, and no system interpreter (${SYSTEM_INTERPRETERS.join(', ')}) can stand in; set SPUR_PYTHON to an interpreter the sandbox user can reach`,
  );
}

/**
 * The sandbox binds the environment's directories read-only: one holding Spur's data folder or
 * source tree (a venv made there, an editable install's .pth) would let user code read the
 * secret key and the code. Refused, naming both, rather than hiding them under the bind.
 */
function refuseExposing(python: PythonEnvironment, settings: Readonly<PythonSettings>): PythonEnvironment {
  if (settings.sandbox === 'off') return python;
  const exposed = exposedPrivateDirs(sandboxReadableDirs(python), settings.privateDirs);
  if (exposed.length === 0) return python;
  const shown = exposed.map(({ dir, root }) => `${dir.name}, ${dir.path} (the sandbox binds ${root})`);
  throw new Error(
    `the Python environment ${python.executable} would show ${shown.join(' and ')} to user code; set SPUR_PYTHON to an interpreter whose directories hold neither (e.g. /usr/bin/python3), or keep the data folder elsewhere`,
  );
}

/** A root worker runs the sandbox as uid 65534: the first folder on the way to the environment it cannot enter. */
function blockedDir(python: PythonEnvironment, settings: Readonly<PythonSettings>): string | undefined {
  if (settings.sandbox === 'off' || process.getuid?.() !== 0) return undefined;
  for (const root of python.roots) {
    for (let dir = path.dirname(root); dir !== '/'; dir = path.dirname(dir)) {
      if ((statSync(dir).mode & 0o001) === 0) return dir;
    }
  }
  return undefined;
}
