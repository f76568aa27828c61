import assert from 'node:assert/strict';
import { DryRunStop, dryRunGuard } from '../../temporal/activities/dry-run-guard';

describe('the dry-run guard of one node execution', () => {
  const sent: string[] = [];
  /** The outbound client a node would use: records what is really sent. */
  const deps = {
    fetch: async (input: string | URL | Request) => {
      sent.push(String(input instanceof Request ? input.url : input));
      return new Response('{}');
    },
    secret: async (name: string) =>
      ({ SLACK_BOT_TOKEN: 'xoxb-secret-value-1', SLACK_API_BASE: 'http://127.0.0.1:9/slack' })[name],
  };
  beforeEach(() => {
    sent.length = 0;
  });

  it('sends requests until the node acts; then records the first, sends nothing and stops the node', async () => {
    const guard = dryRunGuard(deps);
    await guard.fetch('http://127.0.0.1:9/read');
    guard.actingFromHere();
    await assert.rejects(guard.fetch('http://127.0.0.1:9/write', { method: 'POST', body: 'one' }), DryRunStop);
    await assert.rejects(guard.fetch('http://127.0.0.1:9/again', { method: 'POST', body: 'two' }), DryRunStop);
    assert.deepEqual(sent, ['http://127.0.0.1:9/read']);
    assert.equal(guard.captured()?.url, 'http://127.0.0.1:9/write');
    assert.equal(guard.captured()?.body, 'one');
  });

  it('redacts credential headers and every stored credential the node read, not base URLs', async () => {
    const guard = dryRunGuard(deps);
    const token = (await guard.secret('SLACK_BOT_TOKEN')) as string;
    const base = (await guard.secret('SLACK_API_BASE')) as string;
    guard.actingFromHere();
    await assert.rejects(
      guard.fetch(`${base}/post?token=${encodeURIComponent(token)}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'X-Echo': `copy ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ text: `the token is ${token}` }),
      }),
      DryRunStop,
    );
    const request = guard.captured();
    assert.equal(request?.url, 'http://127.0.0.1:9/slack/post?token=[redacted]');
    assert.deepEqual(request?.headers, {
      authorization: '[redacted]',
      'content-type': 'application/json',
      'x-echo': 'copy [redacted]',
    });
    assert.equal(request?.body, '{"text":"the token is [redacted]"}');
  });

  it('keeps the first 64 KiB of a longer body and says it was cut', async () => {
    const guard = dryRunGuard(deps);
    guard.actingFromHere();
    await assert.rejects(guard.fetch('http://127.0.0.1:9/big', { method: 'PUT', body: 'x'.repeat(100_000) }));
    assert.equal(guard.captured()?.body?.length, 64 * 1024);
    assert.equal(guard.captured()?.body_truncated, true);
  });
});
