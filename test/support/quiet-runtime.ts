import { DefaultLogger, Runtime, makeTelemetryFilterString } from '@temporalio/worker';

/**
 * Workers a test runs in its own process log every state change; keep their output to errors
 * (results carry the failures). Once per process: a runtime installed before is kept.
 */
export function quietRuntime(): void {
  try {
    Runtime.install({
      logger: new DefaultLogger('ERROR'),
      telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }), forward: {} } },
    });
  } catch {
    // a runtime is already installed in this process: keep it
  }
}
