import { settingOrFail } from '../../credential-bases.js';
import type { NodeExecutionContext } from '../../types.js';

/** A credential the node cannot run without; its absence fails the task naming the variable. */
export async function requireSetting(ctx: Pick<NodeExecutionContext, 'secret'>, name: string): Promise<string> {
  return settingOrFail((variable) => ctx.secret(variable), name);
}

/** Waits `ms`, or rejects with the activity's cancellation as soon as it arrives. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
