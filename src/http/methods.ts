/** GET, HEAD and OPTIONS read; every other method (POST, PUT, PATCH, DELETE, and any unknown one) may change state. */
export function isStateChanging(method: string): boolean {
  return method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS';
}
