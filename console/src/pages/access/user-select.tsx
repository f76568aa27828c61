import type { User } from './types';

/** A select of users by name and id; `none` names the empty first option (what no choice means). */
export function UserSelect({
  users,
  value,
  none,
  required,
  onChange,
}: {
  users: User[];
  value: string;
  none: string;
  required?: boolean;
  onChange: (id: string) => void;
}) {
  return (
    <select name="user_id" required={required} value={value} onChange={(e) => onChange(e.currentTarget.value)}>
      <option value="">{none}</option>
      {users.map((u) => (
        <option value={u.id}>
          {u.username} ({u.id})
        </option>
      ))}
    </select>
  );
}
