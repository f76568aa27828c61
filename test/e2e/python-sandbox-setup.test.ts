import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../../scripts/lib/tools';
import { withApi } from '../support/api';
import { client } from '../support/http';
import { runPython } from '../support/python-runs';
import { startWorker } from '../support/worker';
import { runWorkerHealth } from '../support/worker-health';

// Secure by default: the worker's health check (src/processes/worker-health.ts, its compose health
// check) says whether the sandbox starts, and Python runs refuse to start without one unless the
// operator says the code is trusted. The opt-in network, which needs root, is
// python-sandbox-network.test.ts.

/** `text` as a literal in a RegExp. */
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** True when every folder on the way to `dir` may be entered by any user. */
function canEnterAsOthers(dir: string): boolean {
  for (let at = dir; at !== '/'; at = path.dirname(at)) if ((statSync(at).mode & 0o001) === 0) return false;
  return true;
}

describe('e2e: the Python sandbox in health and when it cannot start', function () {
  this.timeout(120_000);

  it("reports a working sandbox in the worker's health check", async () => {
    await withApi({}, async (api) => {
      const health = await runWorkerHealth(api.env);
      assert.equal(health.code, 0, health.output);
      assert.match(health.output, /python_sandbox ok \(bubblewrap, network none, Python 3\./);
    });
  });

  it('with nothing set, runs Python nodes sandboxed even where python3 on PATH is in a folder the sandbox user cannot enter', async function () {
    const onPath = execFileSync('python3', ['-c', 'import os, sys; print(os.path.realpath(sys.executable))'], {
      encoding: 'utf8',
    }).trim();
    const hidden = process.getuid?.() === 0 && !canEnterAsOthers(path.dirname(onPath));
    await withApi({}, async (api) => {
      const http = client(api.baseUrl);
      const health = await runWorkerHealth(api.env);
      assert.equal(health.code, 0, health.output);
      if (hidden)
        assert.match(
          health.output,
          /python3 on PATH cannot be used: .* cannot enter, so \/usr\/bin\/python3 runs user code \(SPUR_PYTHON chooses another\)/,
        );
      else assert.doesNotMatch(health.output, /cannot be used/);
      const worker = await startWorker(api.env);
      try {
        const task = await runPython(
          http,
          'import os, sys\nreturn {"python": os.path.realpath(sys.executable), "uid": os.getuid()}',
        );
        assert.equal(task.status, 'COMPLETED', task.error);
        const out = task.outputs as { python: string; uid: number };
        assert.equal(out.python, hidden ? realpathSync('/usr/bin/python3') : onPath);
      } finally {
        await worker.stop();
      }
    });
  });

  it("fails the worker's health check naming the cause and the setting when the sandbox cannot start", async () => {
    await withApi({}, async (api) => {
      const health = await runWorkerHealth(api.env, { SPUR_PYTHON: '/nonexistent/python3' });
      assert.equal(health.code, 1, health.output);
      assert.match(
        health.output,
        /^worker unhealthy: python_sandbox FAILED: .*\/nonexistent\/python3.*SPUR_PYTHON.*SPUR_PYTHON_SANDBOX=off runs them unsandboxed, for trusted code only/,
      );
    });
  });

  it("refuses a Python environment whose directories hold Spur's source tree or data folder: the worker's health check names it and SPUR_PYTHON", async () => {
    // A venv of the system's interpreter, enterable by the sandbox user (not under /tmp, which is the sandbox's own).
    const venv = mkdtempSync('/var/tmp/spur-venv-');
    chmodSync(venv, 0o755);
    try {
      execFileSync('/usr/bin/python3', ['-m', 'venv', '--without-pip', venv]);
      const python = path.join(venv, 'bin', 'python');
      const sitePackages = execFileSync(
        python,
        ['-I', '-c', 'import sysconfig; print(sysconfig.get_path("purelib"))'],
        {
          encoding: 'utf8',
        },
      ).trim();
      await withApi({}, async (api) => {
        // An editable install of the checkout: its .pth puts the source tree on sys.path, so the sandbox would bind it.
        const pth = path.join(sitePackages, 'spur-editable.pth');
        writeFileSync(pth, `${REPO_ROOT}\n`);
        const withSource = await runWorkerHealth(api.env, { SPUR_PYTHON: python });
        assert.equal(withSource.code, 1, withSource.output);
        assert.match(
          withSource.output,
          new RegExp(
            `python_sandbox FAILED: .*would show .*Spur's source tree, ${escape(REPO_ROOT)} \\(the sandbox binds ${escape(REPO_ROOT)}\\).* to user code; set SPUR_PYTHON`,
          ),
        );
        rmSync(pth);

        // The data folder made inside the environment's folder.
        const dataDir = path.join(venv, 'spur-data');
        const withData = await runWorkerHealth(api.env, { SPUR_PYTHON: python, SPUR_DATA_DIR: dataDir });
        assert.equal(withData.code, 1, withData.output);
        assert.match(
          withData.output,
          new RegExp(
            `python_sandbox FAILED: .*would show the data folder \\(SPUR_DATA_DIR\\), ${escape(dataDir)} \\(the sandbox binds ${escape(realpathSync(venv))}\\) to user code; set SPUR_PYTHON`,
          ),
        );

        // The same environment holding neither runs.
        const clean = await runWorkerHealth(api.env, { SPUR_PYTHON: python });
        assert.equal(clean.code, 0, clean.output);
        assert.match(clean.output, /python_sandbox ok \(bubblewrap/);
      });
    } finally {
      rmSync(venv, { recursive: true, force: true });
    }
  });

  it('fails Python runs with the cause when bubblewrap is missing, and never runs them unsandboxed', async () => {
    await withApi({}, async (api) => {
      // A worker whose PATH has no bwrap (the interpreter is given as an absolute path).
      const worker = await startWorker(api.env, { PATH: '/nonexistent', SPUR_PYTHON: '/usr/bin/python3' });
      try {
        const task = await runPython(client(api.baseUrl), 'return {"ran": 1}');
        assert.equal(task.status, 'FAILED');
        assert.match(
          task.error ?? '',
          /The Python sandbox cannot start \(SPUR_PYTHON_SANDBOX=bubblewrap\): bwrap is not installed \(Debian: apt-get install bubblewrap\)/,
        );
      } finally {
        await worker.stop();
      }
    });
  });

  it("runs unsandboxed only when told to, and the worker's health check says the code must be trusted", async () => {
    await withApi({ SPUR_PYTHON_SANDBOX: 'off' }, async (api) => {
      const http = client(api.baseUrl);
      const health = await runWorkerHealth(api.env);
      assert.equal(health.code, 0, health.output);
      assert.match(health.output, /python_sandbox ok \(off \(SPUR_PYTHON_SANDBOX=off\).*trusted code only/);
      const worker = await startWorker(api.env);
      try {
        const task = await runPython(http, 'import socket\nreturn {"interfaces": len(socket.if_nameindex())}');
        assert.equal(task.status, 'COMPLETED', task.error);
        assert.ok((task.outputs as { interfaces: number }).interfaces > 1, 'the host network: no sandbox');
      } finally {
        await worker.stop();
      }
    });
  });
});
