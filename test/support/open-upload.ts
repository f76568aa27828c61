import net from 'node:net';

const BOUNDARY = 'spur-boundary-1234';

export interface OpenUpload {
  /** Sends `tail` and the end of the form, and resolves with the whole raw HTTP answer. */
  finish(tail: Buffer): Promise<string>;
}

/**
 * Opens a multipart POST to `path`, sends the text fields and the first `head` bytes of one file
 * part named `fileField`, and leaves the request open: a test can look at what the server stored
 * while the upload is still arriving (chunked transfer, so no length tells the server the end).
 */
export function openUpload(
  baseUrl: string,
  path: string,
  fields: Record<string, string>,
  file: { field: string; name: string; head: Buffer },
): OpenUpload {
  const url = new URL(baseUrl);
  const socket = net.connect(Number(url.port), url.hostname);
  let answer = '';
  socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  const fieldParts = Object.entries(fields)
    .map(([k, v]) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`)
    .join('');
  socket.write(
    `POST ${url.pathname}${path} HTTP/1.1\r\nHost: ${url.host}\r\nConnection: close\r\nContent-Type: multipart/form-data; boundary=${BOUNDARY}\r\nTransfer-Encoding: chunked\r\n\r\n`,
  );
  const chunk = (data: Buffer | string) => {
    if (Buffer.byteLength(data) === 0) return;
    socket.write(`${Buffer.byteLength(data).toString(16)}\r\n`);
    socket.write(data);
    socket.write('\r\n');
  };
  chunk(
    `${fieldParts}--${BOUNDARY}\r\nContent-Disposition: form-data; name="${file.field}"; filename="${file.name}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  chunk(file.head);
  return {
    async finish(tail: Buffer): Promise<string> {
      chunk(tail);
      chunk(`\r\n--${BOUNDARY}--\r\n`);
      socket.write('0\r\n\r\n');
      await closed;
      return answer;
    },
  };
}

/** The JSON body of a raw chunked HTTP answer (one chunk, as Koa sends a JSON body). */
export function answerJson(answer: string): any {
  return JSON.parse(
    answer
      .slice(answer.indexOf('\r\n\r\n') + 4)
      .replace(/^[0-9a-f]+\r\n/, '')
      .replace(/\r\n0\r\n\r\n$/, ''),
  );
}
