import { z } from 'zod';
import { defineRoute, type MountableRoute } from '../../http/route';
import type { EnvService } from './env-mgmt.service';

/**
 * PySpur's Google sign-in endpoints: the web UI hands over the OAuth access token it obtained, and
 * asks whether the stored one is still valid. The token becomes the GOOGLE_ACCESS_TOKEN setting
 * (encrypted like every secret) that the Google Sheets node reads; its expiry is kept beside it.
 */
export const GOOGLE_TOKEN_EXPIRY_VARIABLE = 'GOOGLE_ACCESS_TOKEN_EXPIRES_AT';

const tags = ['google auth'];
const TokenInput = z.object({ access_token: z.string().min(1).max(8192), expires_in: z.number().int() });

export function googleTokenRoutes(env: EnvService, clock: () => Date = () => new Date()): MountableRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/google/store_token/',
      permission: 'credentials.manage',
      audit: { action: 'credential.set_google_token' },
      summary: 'Store the Google OAuth access token for the Sheets node',
      tags,
      body: TokenInput,
      response: z.object({ message: z.string() }),
      async handler({ body }) {
        await env.set('GOOGLE_ACCESS_TOKEN', body.access_token);
        await env.set(GOOGLE_TOKEN_EXPIRY_VARIABLE, new Date(clock().getTime() + body.expires_in * 1000).toISOString());
        return { message: 'Token stored successfully!' };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/google/validate_token/',
      summary: 'Whether a stored Google token exists and has not expired',
      tags,
      response: z.object({ is_valid: z.boolean() }),
      async handler() {
        const token = await env.reveal('GOOGLE_ACCESS_TOKEN');
        const expiresAt = Date.parse((await env.reveal(GOOGLE_TOKEN_EXPIRY_VARIABLE)) ?? '');
        // A token set by hand has no recorded expiry: it counts as valid until Google refuses it.
        return { is_valid: Boolean(token) && (Number.isNaN(expiresAt) || expiresAt > clock().getTime()) };
      },
    }),
  ];
}
