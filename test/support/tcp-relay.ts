import net from 'node:net';

/**
 * A loopback TCP relay in front of a real server (Temporal, FerretDB), for crash tests that must
 * stop a process between two of its requests: `hold` keeps what clients send from the first
 * message the predicate picks on (that connection's and every later message), while answers keep
 * flowing back; `release` sends what was held. `loseAnswerTo` lets the next message the predicate
 * picks reach the server, then closes that connection instead of passing its answer on: the
 * request was carried out, and its sender cannot know. With `mongodb` framing a message is one
 * whole wire protocol message (its int32 length prefix); otherwise it is whatever one read returned.
 */
export interface TcpRelay {
  /** `127.0.0.1:<port>`. */
  address: string;
  port: number;
  hold(predicate?: (message: Buffer) => boolean): void;
  /** Once: the next message the predicate picks is carried out, and its connection closed before the answer. */
  loseAnswerTo(predicate: (message: Buffer) => boolean): void;
  /** How many answers `loseAnswerTo` kept from their senders. */
  lostAnswers(): number;
  /** How many messages are held now (the first is the one the predicate picked). */
  heldCount(): number;
  release(): void;
  close(): Promise<void>;
}

interface Pipe {
  client: net.Socket;
  upstream: net.Socket;
  pending: Buffer;
  held: Buffer[] | null;
  /** The answer now coming from the server is not passed on: the connection closes. */
  loseAnswer: boolean;
}

export async function startTcpRelay(
  target: { host: string; port: number },
  framing: 'mongodb' | 'bytes' = 'bytes',
): Promise<TcpRelay> {
  const pipes = new Set<Pipe>();
  let holding: ((message: Buffer) => boolean) | null = null;
  let losing: ((message: Buffer) => boolean) | null = null;
  let lost = 0;

  const messages = (pipe: Pipe, chunk: Buffer): Buffer[] => {
    if (framing === 'bytes') return [chunk];
    pipe.pending = Buffer.concat([pipe.pending, chunk]);
    const out: Buffer[] = [];
    while (pipe.pending.length >= 4 && pipe.pending.length >= pipe.pending.readInt32LE(0)) {
      const size = pipe.pending.readInt32LE(0);
      out.push(pipe.pending.subarray(0, size));
      pipe.pending = pipe.pending.subarray(size);
    }
    return out;
  };

  const server = net.createServer((client) => {
    const upstream = net.connect(target);
    const pipe: Pipe = { client, upstream, pending: Buffer.alloc(0), held: null, loseAnswer: false };
    pipes.add(pipe);
    const end = () => {
      pipes.delete(pipe);
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (chunk: Buffer) => {
      for (const message of messages(pipe, chunk)) {
        if (pipe.held === null && holding?.(message)) pipe.held = [];
        if (losing?.(message)) {
          losing = null;
          pipe.loseAnswer = true;
        }
        if (pipe.held) pipe.held.push(message);
        else upstream.write(message);
      }
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!pipe.loseAnswer) return void client.write(chunk);
      lost++;
      end();
    });
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    port,
    hold: (predicate = () => true) => void (holding = predicate),
    loseAnswerTo: (predicate) => void (losing = predicate),
    lostAnswers: () => lost,
    heldCount: () => [...pipes].reduce((sum, pipe) => sum + (pipe.held?.length ?? 0), 0),
    release() {
      holding = null;
      for (const pipe of pipes) {
        for (const message of pipe.held ?? []) pipe.upstream.write(message);
        pipe.held = null;
      }
    },
    async close() {
      for (const pipe of pipes) {
        pipe.client.destroy();
        pipe.upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
