// A counting TCP proxy in front of MongoDB/FerretDB: every client message (a round trip) is
// tallied by its command name, so a profile can say how many database calls one run costs — a
// count the machine's load does not distort. Only OP_MSG (2013) frames are parsed; the command
// name is the first key of the message's body section (kind 0), its value the collection. While
// `record` is on, each round trip's start and end (its reply, matched by `responseTo`) are kept
// too, in epoch milliseconds, for a run's timeline (the proxy's own hop adds ~0.1 ms to each).
import net from 'node:net';

export interface MongoCounter {
  /** The URI the processes under test should use (this proxy). */
  uri: string;
  /** Round trips by command name since the last reset. */
  counts(): Record<string, number>;
  reset(): void;
  /** Keep each round trip's times from now on (until `record(false)`). */
  record(on: boolean): void;
  /** The round trips kept, in the order they started. */
  timeline(): RoundTrip[];
  close(): Promise<void>;
}

export interface RoundTrip {
  name: string;
  start: number;
  end: number;
}

const OP_MSG = 2013;
const now = () => performance.timeOrigin + performance.now();

/** Complete wire-protocol frames from a stream of chunks (each starts with its int32 length). */
function framer(onFrame: (frame: Buffer) => void): (chunk: Buffer) => void {
  let pending: Buffer = Buffer.alloc(0);
  return (chunk) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    while (pending.length >= 16) {
      const length = pending.readInt32LE(0);
      if (pending.length < length) break;
      onFrame(pending.subarray(0, length));
      pending = pending.subarray(length);
    }
  };
}

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
  let recording = false;
  let trips: RoundTrip[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    sockets.add(client).add(upstream);
    const inflight = new Map<number, RoundTrip>();
    client.on('data', (chunk) => {
      upstream.write(chunk);
      requests(chunk);
    });
    const requests = framer((frame) => {
      const name =
        frame.readInt32LE(12) === OP_MSG && frame[20] === 0 ? firstKey(frame, 21) : `op${frame.readInt32LE(12)}`;
      tally[name] = (tally[name] ?? 0) + 1;
      if (recording) inflight.set(frame.readInt32LE(4), { name, start: now(), end: Number.NaN });
    });
    const replies = framer((frame) => {
      const trip = inflight.get(frame.readInt32LE(8));
      if (!trip) return;
      inflight.delete(frame.readInt32LE(8));
      trip.end = now();
      trips.push(trip);
    });
    upstream.on('data', (chunk) => {
      client.write(chunk);
      replies(chunk);
    });
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
    record: (on) => {
      recording = on;
      if (on) trips = [];
    },
    timeline: () => [...trips].sort((x, y) => x.start - y.start),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
