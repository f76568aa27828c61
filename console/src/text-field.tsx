/** A labelled one-line input whose value the form keeps (text, a number, a password, a local time). */
export function TextField({
  label,
  name,
  value,
  onValue,
  type = 'text',
  placeholder,
  required,
  min,
  autocomplete,
}: {
  label: string;
  name: string;
  value: string;
  onValue: (value: string) => void;
  type?: 'text' | 'number' | 'password' | 'datetime-local';
  placeholder?: string;
  required?: boolean;
  min?: number;
  autocomplete?: string;
}) {
  return (
    <label>
      {label}
      <input
        // Preact types each input type's attributes apart; these attributes suit all four.
        type={type as 'text'}
        name={name}
        value={value}
        placeholder={placeholder}
        required={required}
        min={min}
        autocomplete={autocomplete}
        onInput={(e) => onValue(e.currentTarget.value)}
      />
    </label>
  );
}
