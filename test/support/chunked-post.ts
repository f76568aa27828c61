import http from 'node:http';

export interface ChunkedAnswer {
  status: number;
  body: string;
}

/**
 * POSTs `body` chunked (no Content-Length) and never ends it: the promise settles only when the
 * server answers while the body is still open, which is what a limit enforced during the read
 * does. A server that waits for the end of the body never answers, and the promise rejects after
 * `hangMs` (a bound for a hang, far above any answer's time, not a measure of speed).
 */
export function postChunkedNeverEnded(
  url: string,
  body: Buffer,
  headers: Record<string, string> = {},
  hangMs = 20_000,
): Promise<ChunkedAnswer> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = http.request(url, { method: 'POST', headers: { ...headers, 'transfer-encoding': 'chunked' } });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`no answer within ${hangMs} ms to a chunked body of ${body.length} bytes left open`));
    }, hangMs);
    req.on('response', (res) => {
      answered = true;
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts).toString('utf8') });
        req.destroy();
      });
    });
    // The server may close the connection once it answered: not a failure of the request.
    req.on('error', (err) => {
      if (answered) return;
      clearTimeout(timer);
      reject(err);
    });
    // In several chunks, as a streaming sender sends them; the last write never ends the body.
    for (let at = 0; at < body.length; at += 64) req.write(body.subarray(at, at + 64));
  });
}
