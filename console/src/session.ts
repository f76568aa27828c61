import { createContext } from 'preact';
import { useContext } from 'preact/hooks';

/** Who is signed in, as GET /api/access/me/ says: the console shows only the actions their role allows. */
export interface Me {
  /** Null for a key configured by the operator (SPUR_API_KEY_HASHES), which is no user. */
  user: { id: string } | null;
  username: string;
  role: string | null;
  workspace_id: string;
  permissions: string[];
}

export const MeContext = createContext<Me | null>(null);

/** Whether the signed-in caller may take actions that need `permission` (the gate decides anyway). */
export function useCan(permission: string): boolean {
  return useContext(MeContext)?.permissions.includes(permission) ?? false;
}
