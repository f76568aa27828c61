import assert from 'node:assert/strict';
import net from 'node:net';
import { apiTemporalConnection } from '../../src/temporal-connection';

describe('unit: the api’s Temporal connection', () => {
  it('closing it while a call is retrying rejects that call (CANCELLED) instead of throwing from a timer', async () => {
    // A loopback port with nothing listening: every attempt fails UNAVAILABLE and is retried.
    const port = await new Promise<number>((resolve) => {
      const server = net.createServer().listen(0, '127.0.0.1', () => {
        const { port: p } = server.address() as net.AddressInfo;
        server.close(() => resolve(p));
      });
    });
    const connection = apiTemporalConnection(`127.0.0.1:${port}`);
    const call = connection.workflowService.getSystemInfo({});
    const settled = call.then(
      () => 'resolved',
      (err: unknown) => (err as Error).message,
    );
    // Let the first attempt fail so a retry timer is pending, then close underneath it. With the
    // SDK's default interceptor the retry throws "Channel has been shut down" from its timer (an
    // uncaught exception that fails this test) and the call never settles.
    await new Promise((r) => setTimeout(r, 300));
    await connection.close();
    assert.match(await settled, /CANCELLED: Channel has been shut down/);
  });
});
