import { loadConfig } from '../config/load-config';
import { checkWorkerHealth, oneLine } from '../health/worker-health';

/**
 * The worker container's health check (docker-compose.yml runs `node
 * dist/src/processes/worker-health.js` in it): proves that a Python sandbox starts there with the worker's
 * settings and that MongoDB and Temporal answer. Prints one line; exits 0 when healthy, else 1.
 */
async function main(): Promise<void> {
  const health = await checkWorkerHealth(loadConfig());
  (health.ok ? process.stdout : process.stderr).write(`${health.line}\n`);
  process.exit(health.ok ? 0 : 1);
}

main().catch((err: unknown) => {
  process.stderr.write(`${oneLine(`worker unhealthy: ${(err as Error).message}`)}\n`);
  process.exit(1);
});
