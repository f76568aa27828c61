// nginx from the OS packages in front of the cluster's apis, as a process of its own (own config,
// pid and temp folders; no system service). It routes around an api that refuses connections.
import { chownSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { assertPortFree, waitForTcp } from '../ports';
import { type ManagedProcess, spawnManaged } from '../processes';
import { waitUntilUp } from '../servers';

const HOST = '127.0.0.1';
/** Debian's nginx: a root master runs its workers as this user, which must reach the temp folders. */
const WORKER_USER = { name: 'nobody', group: 'nogroup', uid: 65534, gid: 65534 };

export interface LoadBalancerOptions {
  port: number;
  /** The apis' ports on loopback. */
  upstreams: number[];
  dir: string;
  logFile?: string;
}

export interface LoadBalancer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  handle: ManagedProcess;
  options: LoadBalancerOptions;
}

/**
 * The proxy a deployment puts in front of several apis. What Spur needs of it: streams (event
 * streams, blocking runs that wait minutes) pass unbuffered and are not cut; uploads stream; a
 * request that could not reach an api (connection refused: that api is down) goes to the next one,
 * while one an api has received is never sent twice (nginx's default for POST); when no api could
 * answer it (the one holding it died), the client gets Spur's 503 with Retry-After, so it sends it
 * again (with its Idempotency-Key, to get the same run) instead of reading a proxy's 502.
 */
export function nginxConfig(o: LoadBalancerOptions, runAsRoot: boolean): string {
  const dir = path.resolve(o.dir);
  const servers = o.upstreams.map((port) => `    server ${HOST}:${port} max_fails=1 fail_timeout=5s;`).join('\n');
  return `${runAsRoot ? `user ${WORKER_USER.name} ${WORKER_USER.group};\n` : ''}worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log stderr warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/client-body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  # Spur answers 413 itself, naming its own limits (SPUR_MAX_JSON_BYTES, SPUR_MAX_UPLOAD_BYTES).
  client_max_body_size 0;
  upstream spur_api {
${servers}
    keepalive 64;
    # Below Node's keep-alive timeout (5 s): nginx must never reuse a connection the api is closing,
    # or a POST on it fails (and is not retried, the api may have read it).
    keepalive_timeout 4s;
  }
  server {
    listen ${HOST}:${o.port};
    location / {
      proxy_pass http://spur_api;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_buffering off;
      proxy_request_buffering off;
      proxy_read_timeout 1h;
      proxy_send_timeout 1h;
      proxy_next_upstream error timeout;
      proxy_connect_timeout 2s;
      proxy_intercept_errors off;
      error_page 502 504 = @unavailable;
    }
    location @unavailable {
      default_type application/json;
      add_header Retry-After 5 always;
      return 503 '{"detail":"The api handling this request stopped; send it again (with the same Idempotency-Key)"}';
    }
  }
}
`;
}

export async function startLoadBalancer(options: LoadBalancerOptions): Promise<LoadBalancer> {
  await assertPortFree(HOST, options.port, 'the load balancer');
  const dir = path.resolve(options.dir);
  const runAsRoot = process.getuid?.() === 0;
  for (const sub of ['client-body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) {
    mkdirSync(path.join(dir, sub), { recursive: true });
    if (runAsRoot) chownSync(path.join(dir, sub), WORKER_USER.uid, WORKER_USER.gid);
  }
  const config = path.join(dir, 'nginx.conf');
  writeFileSync(config, nginxConfig(options, runAsRoot));
  const handle = spawnManaged({
    name: 'nginx',
    command: '/usr/sbin/nginx',
    args: ['-c', config, '-p', dir, '-e', 'stderr'],
    logFile: options.logFile,
  });
  await waitUntilUp(handle, 'nginx', options.logFile, waitForTcp(HOST, options.port, 30_000));
  return { url: `http://${HOST}:${options.port}`, handle, options };
}
