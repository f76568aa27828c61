// A counting TCP proxy in front of MongoDB/FerretDB: every client message (a round trip) is
// tallied by its command name, so a profile can say how many database calls one run costs — a
// count the machine's load does not distort. Only OP_MSG (2013) frames are parsed; the command
// name is the first key of the message's body section (kind 0), its value the collection.
import net from 'node:net';

export interface MongoCounter {
  /** The URI the processes under test should use (this proxy). */
  uri: string;
  /** Round trips by command name since the last reset. */
  counts(): Record<string, number>;
  reset(): void;
  close(): Promise<void>;
}

const OP_MSG = 2013;

/**
 * The first element of a BSON document starting at `offset` (type byte, C-string name): the
 * command, with its collection when the value is a string (`find:runs`).
 */
function firstKey(buf: Buffer, offset: number): string {
  const start = offset + 5; // int32 length, then the element's type byte
  const end = buf.indexOf(0, start);
  if (end <= start) return '?';
  const name = buf.toString('latin1', start, end);
  if (buf[offset + 4] !== 0x02) return name;
  const length = buf.readInt32LE(end + 1);
  return `${name}:${buf.toString('utf8', end + 5, end + 4 + length)}`;
}

export async function startMongoCounter(target: { host: string; port: number }): Promise<MongoCounter> {
  let tally: Record<string, number> = {};
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    sockets.add(client).add(upstream);
    let pending = Buffer.alloc(0);
    client.on('data', (chunk) => {
      upstream.write(chunk);
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      while (pending.length >= 16) {
        const length = pending.readInt32LE(0);
        if (pending.length < length) break;
        const name = pending.readInt32LE(12) === OP_MSG && pending[20] === 0 ? firstKey(pending, 21) : `op${pending.readInt32LE(12)}`;
        tally[name] = (tally[name] ?? 0) + 1;
        pending = pending.subarray(length);
      }
    });
    upstream.on('data', (chunk) => client.write(chunk));
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref(); // open connections keep the process alive, the listener alone does not
  const { port } = server.address() as net.AddressInfo;
  return {
    uri: `mongodb://127.0.0.1:${port}/`,
    counts: () => ({ ...tally }),
    reset: () => void (tally = {}),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
