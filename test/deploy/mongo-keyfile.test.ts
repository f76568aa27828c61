import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCommand } from '../support/worker-health';
import { type ComposeService, loadProject } from './compose-project';

const IN_CONTAINER = '/data/configdb/keyfile';

/**
 * The mongo service's entrypoint wrapper, run here with sh: a stand-in for the image's
 * docker-entrypoint.sh on PATH records the arguments it is handed.
 */
describe('deploy: the MongoDB keyFile the mongo service writes on its first start', function () {
  this.timeout(30_000);
  let mongo: ComposeService;
  let dir: string;
  let key: string;
  let recorded: string;
  // The wrapper hands the file to the image's mongodb user (uid 999): only root may, as in the
  // container, so the harness runs this file only as root (scripts/lib/privileged-tests.ts).
  before(async () => {
    const loaded = (await loadProject()).services.mongo;
    assert.ok(loaded);
    mongo = loaded;
    dir = mkdtempSync(path.join(os.tmpdir(), 'spur-mongo-keyfile-'));
    mkdirSync(path.join(dir, 'bin'));
    mkdirSync(path.join(dir, 'configdb'));
    key = path.join(dir, 'configdb', 'keyfile');
    recorded = path.join(dir, 'entrypoint-args');
    writeFileSync(path.join(dir, 'bin', 'docker-entrypoint.sh'), '#!/bin/sh\nprintf "%s\\n" "$@" > "$RECORDED"\n', {
      mode: 0o755,
    });
  });
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** The compose entrypoint and command, with the keyFile path moved from the container's volume to `key`. */
  function start(command: string[]) {
    const [file, ...args] = [...(mongo.entrypoint ?? []), ...command];
    return runCommand(file ?? 'sh', args, {
      env: { PATH: `${path.join(dir, 'bin')}${path.delimiter}${process.env.PATH ?? ''}`, RECORDED: recorded },
    });
  }
  const command = () => (mongo.command ?? []).map((arg) => (arg === IN_CONTAINER ? key : arg));

  it('writes a random key where --keyFile names it, mode 0400 and owned by uid 999, then runs the image entrypoint with the same arguments', async () => {
    assert.ok(
      mongo.command?.includes(IN_CONTAINER),
      'the compose command names the keyFile on the mongo-config volume',
    );
    const first = await start(command());
    assert.equal(first.code, 0, first.output);
    const stat = statSync(key);
    assert.equal(stat.mode & 0o777, 0o400, 'mongod refuses a keyFile that group or others may read');
    assert.deepEqual([stat.uid, stat.gid], [999, 999], "the image's mongodb user");
    const content = readFileSync(key, 'utf8');
    // mongod's rules: 6 to 1024 characters of the base64 set.
    assert.match(content, /^[A-Za-z0-9+/]{6,1024}={0,2}$/);
    assert.ok(content.length >= 1000, `a long random key (${content.length} characters)`);
    assert.deepEqual(
      readFileSync(recorded, 'utf8').trimEnd().split('\n'),
      command(),
      'docker-entrypoint.sh gets the command unchanged',
    );
  });

  it('keeps the key on later starts and restores its mode and owner', async () => {
    const before = readFileSync(key, 'utf8');
    chmodSync(key, 0o644);
    const again = await start(command());
    assert.equal(again.code, 0, again.output);
    assert.equal(readFileSync(key, 'utf8'), before, 'the replica set keeps its key');
    assert.equal(statSync(key).mode & 0o777, 0o400);
    assert.doesNotMatch(again.output, /generated/);
  });

  it('refuses to start mongod when the command names no keyFile', async () => {
    rmSync(recorded, { force: true });
    const without = await start(['--replSet', 'rs0', '--bind_ip_all']);
    assert.equal(without.code, 1);
    assert.match(without.output, /names no --keyFile/);
    assert.equal(existsSync(recorded), false, 'the image entrypoint did not run');
  });
});
