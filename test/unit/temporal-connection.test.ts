import assert from 'node:assert/strict';
import net from 'node:net';
import { apiTemporalConnection } from '../../src/temporal-connection';

describe('unit: the api’s Temporal connection', () => {
  it('closing it while a call is retrying rejects that call (CANCELLED) instead of throwing from a timer', async () => {
    // A loopback server that hangs up on every connection: every attempt fails UNAVAILABLE and is retried.
    let connections = 0;
    const server = net.createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    try {
      const connection = apiTemporalConnection(`127.0.0.1:${port}`);
      const call = connection.workflowService.getSystemInfo({});
      const settled = call.then(
        () => 'resolved',
        (err: unknown) => (err as Error).message,
      );
      // A second connection means an attempt failed and was retried: the retrying is under way,
      // with a timer pending between attempts. Close underneath it. With the SDK's default
      // interceptor the retry throws "Channel has been shut down" from its timer (an uncaught
      // exception that fails this test) and the call never settles.
      const deadline = Date.now() + 20_000;
      while (connections < 2) {
        if (Date.now() > deadline) throw new Error(`the client retried no connection in 20 s (${connections} seen)`);
        await new Promise((r) => setTimeout(r, 10));
      }
      await connection.close();
      assert.match(await settled, /CANCELLED: Channel has been shut down/);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
