import { useState } from 'preact/hooks';

/**
 * A button for what cannot be undone (rotate a URL, delete, revoke): the first press asks, the
 * second acts, Escape or "Keep" takes it back.
 */
export function ConfirmButton({
  label,
  confirm,
  disabled,
  onConfirm,
}: {
  label: string;
  /** The question, naming what the second press does. */
  confirm: string;
  disabled?: boolean;
  onConfirm: () => void;
}) {
  const [asking, setAsking] = useState(false);
  if (!asking)
    return (
      <button type="button" disabled={disabled} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  return (
    <span class="confirm" role="group" aria-label={confirm} onKeyDown={(e) => e.key === 'Escape' && setAsking(false)}>
      <span>{confirm}</span>
      <button
        type="button"
        disabled={disabled}
        ref={(el) => el?.focus()}
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        Yes, {label.toLowerCase()}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Keep
      </button>
    </span>
  );
}
