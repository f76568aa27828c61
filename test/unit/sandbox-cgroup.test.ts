import assert from 'node:assert/strict';
import { ownerOf, parseProcCgroup, sandboxCgroupName } from '../../src/nodes/code-execution/sandbox-cgroup';

// Reading /proc/self/cgroup and naming sandbox cgroups; what the caps do is tested over HTTP
// (test/e2e/python-sandbox-cgroup.test.ts).

describe('sandbox cgroups', () => {
  it('reads the v2 path and each v1 controller path of a hybrid host', () => {
    const parsed = parseProcCgroup('9:name=systemd:/\n8:pids:/w\n4:memory:/process_api/abc\n2:cpu,cpuacct:/\n0::/\n');
    assert.equal(parsed.unified, '/');
    assert.equal(parsed.v1.get('memory'), '/process_api/abc');
    assert.equal(parsed.v1.get('pids'), '/w');
    assert.equal(parsed.v1.get('cpuacct'), '/');
  });

  it('reads a pure v2 host, whose only line is the unified one', () => {
    const parsed = parseProcCgroup('0::/system.slice/spur-worker.service\n');
    assert.equal(parsed.unified, '/system.slice/spur-worker.service');
    assert.equal(parsed.v1.size, 0);
  });

  it("names a sandbox's cgroup after its worker, so a later worker knows whose leftovers it finds", () => {
    const name = sandboxCgroupName(4321, 'a1b2c3');
    assert.equal(ownerOf(name), 4321);
    for (const other of ['spur-worker', 'user.slice', 'spur-sandbox-x-1', 'spur-sandbox-12-', 'spur-sandbox-12-zz'])
      assert.equal(ownerOf(other), undefined, other);
  });
});
