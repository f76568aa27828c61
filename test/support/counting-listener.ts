import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A loopback HTTP server that counts the TCP connections it accepts, whatever arrives on them. */
export interface Listener {
  url: string;
  port: number;
  connections: number;
  close(): Promise<void>;
}

export async function listen(handler: http.RequestListener): Promise<Listener> {
  const server = http.createServer(handler);
  const listener = {
    url: '',
    port: 0,
    connections: 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  server.on('connection', () => listener.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  listener.port = (server.address() as AddressInfo).port;
  listener.url = `http://127.0.0.1:${listener.port}`;
  return listener;
}
