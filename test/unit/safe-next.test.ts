import assert from 'node:assert/strict';
import { safeNext } from '../../src/web-ui/login.routes';

describe('safeNext: where a sign-in may lead', () => {
  it('keeps a path of this server, its query included', () => {
    for (const next of ['/', '/dashboard', '/console/runs?status=FAILED&page=2', '/wf/S1#nodes'])
      assert.equal(safeNext(next), next);
  });

  it('cuts to / what a browser would take to another host: //host, a scheme, a backslash', () => {
    for (const next of ['//evil.example/x', 'https://evil.example/x', '/\\evil.example', 'javascript:alert(1)'])
      assert.equal(safeNext(next), '/', JSON.stringify(next));
  });

  it('cuts to / a tab, newline, space or other control character (a browser drops tabs and newlines from a URL so /\\t/host is //host to it)', () => {
    for (const next of ['/\t/evil.example', '/\n/evil.example', '/\r\n/evil.example', '/a\u0000b', '/a\u007fb', '/ /x'])
      assert.equal(safeNext(next), '/', JSON.stringify(next));
  });

  it('cuts to / what is not a string, or not ASCII (a path a page links to arrives percent-encoded)', () => {
    for (const next of [undefined, null, ['/a', '/b'], 42, '/caf\u00e9', '/\u2215\u2215evil.example'])
      assert.equal(safeNext(next), '/', JSON.stringify(next));
  });
});
