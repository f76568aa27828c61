import { ROLES } from './types';

/**
 * A select of the roles, weakest first; `none` names an empty first option (no role, or "the
 * default" where the API fills one in). Its label is the caller's: a visible one around it, or `label`.
 */
export function RoleSelect({
  value,
  none,
  label,
  onChange,
}: {
  value: string;
  none?: string;
  label?: string;
  onChange: (value: string) => void;
}) {
  return (
    <select name="role" value={value} aria-label={label} onChange={(e) => onChange(e.currentTarget.value)}>
      {none !== undefined && <option value="">{none}</option>}
      {ROLES.map((role) => (
        <option value={role}>{role}</option>
      ))}
    </select>
  );
}
