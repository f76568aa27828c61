import assert from 'node:assert/strict';
import net from 'node:net';
import { startApi, type TestApi } from '../support/api';
import { type ApiProcess, startApiProcess } from '../support/api-process';
import { input, l, n } from '../support/graphs';
import { startWorker, type TestWorker } from '../support/worker';

const REQUEST_TIMEOUT_SECONDS = 2;

/** Opens a connection, writes `sent`, and resolves with what the server answered before it closed it. */
function holdOpen(baseUrl: string, sent: string): Promise<string> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname, () => socket.write(sent));
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString('latin1')));
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
    // Generous: a hang-free server closes it within REQUEST_TIMEOUT_SECONDS plus its check interval; Node's defaults (60 s headers, no request limit) would not.
    socket.setTimeout(40_000, () => socket.destroy(new Error('the server kept a stalled request open')));
  });
}

describe('e2e: the api bounds how long a client can hold a request open', function () {
  this.timeout(120_000);
  let api: TestApi;
  let worker: TestWorker;
  let apiProcess: ApiProcess;

  before(async () => {
    api = await startApi();
    worker = await startWorker(api.env);
    apiProcess = await startApiProcess({
      ...api.env,
      SPUR_HTTP_HEADERS_TIMEOUT_SECONDS: String(REQUEST_TIMEOUT_SECONDS),
      SPUR_HTTP_REQUEST_TIMEOUT_SECONDS: String(REQUEST_TIMEOUT_SECONDS),
    });
  });
  after(async () => {
    await apiProcess?.process.stop();
    await worker?.stop();
    await api?.close();
  });

  it('cuts a client that never finishes its headers (408)', async () => {
    const answer = await holdOpen(apiProcess.baseUrl, 'GET /api/health/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
    assert.match(answer, /^HTTP\/1\.1 408/);
  });

  it('cuts a client that never finishes its body (408)', async () => {
    const answer = await holdOpen(
      apiProcess.baseUrl,
      'POST /api/wf/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"name":',
    );
    assert.match(answer, /^HTTP\/1\.1 408/);
  });

  it('still answers a blocking run that takes longer than the request timeout', async () => {
    const slow = {
      nodes: [
        input(),
        n('py', 'PythonFuncNode', {
          code: `import time\ntime.sleep(${REQUEST_TIMEOUT_SECONDS * 2})\nreturn {"y": input_model["in"]["x"]}`,
          output_schema: { y: 'string' },
        }),
        n('out', 'OutputNode'),
      ],
      links: [l('in', 'py'), l('py', 'out')],
    };
    const wf = (await apiProcess.http.post('/wf/', { name: 'slow blocking', definition: slow })).body;
    const res = await apiProcess.http.post(`/wf/${wf.id}/run/`, { initial_inputs: { in: { x: 'waited' } } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.py, { y: 'waited' });
  });
});
